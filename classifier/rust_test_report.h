// Reads Rust's libtest console output (`cargo test`, the pretty formatter; docs/CLASSIFIER.md "Test
// runners") line by line: `running 3 tests`, `test path::name ... ok` / `FAILED` / `ignored` /
// `ignored, <reason>` / `bench: ...`, the `---- path::name stdout ----` blocks of the failures section
// with their panic (`thread 'name' panicked at src/lib.rs:10:5:` and its message, or the pre-1.73
// `panicked at 'message', src/lib.rs:10:5`), and `test result: FAILED. 1 passed; 1 failed; 0 ignored;
// 0 measured; 0 filtered out; finished in 0.00s`. Each test binary cargo runs is one run; the counts
// add up over them. Streaming and bounded; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class RustTestReader final : public CopyableReader<RustTestReader> {
 public:
  // ASCII lowercase substrings of libtest's result, block and summary lines. Static data.
  static std::vector<std::string> Needles();
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True inside a `---- name stdout ----` block, and while a test runs alone (`--test-threads=1`
  // prints its name first), since those lines carry no needle.
  bool active() const override { return block_.has_value() || running_.has_value(); }
  // True once the last test binary's `test result:` line was seen.
  bool complete() const override { return complete_; }
  // The tests in libtest's order, with its counts summed over the binaries. Pure.
  TestReport Report() const override;

 private:
  // One test's captured output in the failures (or --show-output successes) section.
  struct Block {
    std::string name;
    bool failure = true;
    std::vector<std::string> panic;  // the panic's message lines (at most a few)
    bool in_panic = false, old_form = false;
    std::string first_line, note;    // fallbacks when nothing panicked ("Error: ..." of a Result test)
    std::string detail;
  };

  bool ResultLine(std::string_view line);
  void BlockLine(std::string_view line);
  void EndBlock();
  bool Summary(std::string_view t);
  void Add(TestCase c);

  std::optional<Block> block_;
  bool successes_ = false;             // the blocks now read are --show-output's passing tests
  std::optional<std::string> running_; // a test whose name was printed before its result
  std::unordered_map<std::string, size_t> index_;  // test name -> report_.cases index
  TestCounts run_;                     // this binary's named tests, until its summary replaces them
  TestReport report_;
  bool complete_ = false;
};

}  // namespace gauntlet::classifier
