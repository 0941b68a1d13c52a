// A check the program made of its own result, reported as failed: the assertion messages of the
// test frameworks (GoogleTest's "Expected equality of these values:", JUnit's "expected: <1> but
// was: <2>", Rust's "assertion `left == right` failed", doctest's "is NOT correct!"), a printed
// expected-versus-actual pair ("expected 3.0, got 2.5", "mismatch at index 17"), a difference over
// its bound ("max difference 0.5 exceeds 1e-3"), and the kernel projects' result lines ("Result =
// FAIL", "&&&& FAILED", "Disposition: Failed"). Each shape is what the framework's own source
// prints (docs/CLASSIFIER.md "Where the word lists come from"). Inputs: `lower` is the line's
// message (prefixes removed), ASCII-lowercased. Pure, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::classifier {

enum class CheckReport { kNone, kExpectedActual, kResultLine };

// Which kind of failed check the line reports, or kNone. A line that only validates an argument
// ("expected scalar type Float but found Half") is not a check of a result: callers read
// exception lines of types other than AssertionError elsewhere.
CheckReport FailedCheck(std::string_view lower);

// The prefilter needles of FailedCheck (ASCII lowercase).
std::vector<std::string> CheckReportNeedles();

}  // namespace gauntlet::classifier
