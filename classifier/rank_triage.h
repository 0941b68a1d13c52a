// What multi-rank launchers say about which rank failed: torchrun's "[rankN]:" line prefixes, its
// ChildFailedError report ("Root Cause (first observed failure)"), and torch.multiprocessing's
// "-- Process N terminated with the following error:" / ProcessExitedException. The classifier
// uses them to attribute unprefixed lines to a rank and to name the rank that failed first
// (docs/CLASSIFIER.md "Ranks"). Pure functions, and one small per-log reader; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gauntlet::classifier {

// The global rank of a torchrun-style prefix at the very start of a line ("[rank3]: ...",
// "[rank3]:[E1201 ...] ..."); -1 when the line has none. Cheap: called for every line.
int TorchrunRankPrefix(std::string_view line);

// The process index of torch.multiprocessing's "-- Process 1 terminated with the following error:"
// (the parent reprints that child's traceback after it); -1 for any other text.
int SpawnFailedProcess(std::string_view msg);

// torch.multiprocessing's ProcessExitedException message: "process 1 terminated with signal
// SIGSEGV" or "process 0 terminated with exit code 1". nullopt for anything else.
struct SpawnExit {
  int process = -1;
  std::optional<int> signal;  // signal number
  std::optional<int> exit_code;
};
std::optional<SpawnExit> ParseSpawnExit(std::string_view msg);

// Reads torchrun's ChildFailedError report line by line once its "Root Cause (first observed
// failure):" header was seen (Start). The root cause is the failure the elastic agent observed
// first: often the rank at fault, but after a hang it is the survivor whose NCCL watchdog fired,
// so the classifier trusts the log's own errors first and uses this as a fallback.
class RootCauseReader {
 public:
  void Start();
  // Feeds the next raw line while active(); the block ends at its "=====" rule (or after 200 lines).
  void Observe(std::string_view line);
  bool active() const { return active_; }
  bool done() const { return done_; }
  int rank() const { return rank_; }                          // global rank, -1 when not printed
  // True from a "traceback :" field that holds a Python traceback on (the rank's error file,
  // written by @record, reprinted two spaces in): the lines until the block ends are that rank's.
  bool reprinting() const { return active_ && reprint_; }
  std::optional<int> exitcode() const { return exitcode_; }   // negative: killed by signal -exitcode
  const std::string& evidence() const { return evidence_; }   // the exitcode or "Signal N" line

 private:
  bool active_ = false;
  bool done_ = false;
  bool reprint_ = false;
  int lines_ = 0;
  int rank_ = -1;
  std::optional<int> exitcode_;
  std::string evidence_;
};

}  // namespace gauntlet::classifier
