// One test runner's console report, read line by line into a TestReport (test_report.h). Each
// runner (pytest, GoogleTest, CTest, Catch2, doctest, Rust's libtest, go test, unittest, the
// kernel projects' result lines) is one class in its own file, registered once in
// test_runners.cc; the classifier walks that list (docs/CLASSIFIER.md "Test runners"). Adding a
// runner is a new file and a line there.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/test_report.h"

namespace gauntlet::classifier {

// A reader sees, in log order, every line that contains one of its needles() (ASCII
// case-insensitive substrings) and every line while active() is true (so every reader names
// needles); Observe must ignore any
// other line cheaply. Streaming and bounded by test_report.h's caps; the result must not depend on
// how the log was chunked. Not thread-safe; Clone copies the whole state (Classifier::Finish works
// on a copy).
class TestRunnerReader {
 public:
  virtual ~TestRunnerReader() = default;
  // One line of output, without its line end (a trailing '\r' is ignored).
  virtual void Observe(std::string_view line) = 0;
  // True while the reader needs every line (inside a report block whose lines carry no needle).
  virtual bool active() const = 0;
  // True once the runner's closing summary was seen: the run was this runner's and it finished.
  virtual bool complete() const = 0;
  // What the runner reported so far (cases in its order, its counts, its summary line). Pure.
  virtual TestReport Report() const = 0;
  virtual std::unique_ptr<TestRunnerReader> Clone() const = 0;
};

// A registered runner: its name (TestReport::runner), the substrings that make a line worth
// showing it, and a factory. Static data.
struct TestRunnerEntry {
  std::string_view runner;
  std::vector<std::string> needles;
  std::unique_ptr<TestRunnerReader> (*make)();
};

// Every registered runner, in the order the classifier prefers a complete report when two finished
// in one log. Never empty; static storage; thread-safe.
const std::vector<TestRunnerEntry>& TestRunners();

// CRTP helper: Clone for a copyable reader.
template <typename Self>
class CopyableReader : public TestRunnerReader {
 public:
  std::unique_ptr<TestRunnerReader> Clone() const override {
    return std::make_unique<Self>(static_cast<const Self&>(*this));
  }
};

}  // namespace gauntlet::classifier
