// Process supervision for stages: argv without a shell, its own process group, a fresh working
// directory, a given environment, output merged into one pipe, and a stop that reaches every
// descendant (SIGTERM to the group, SIGKILL after a grace period).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "workers/classifier/signals.h"  // SignalName: how logs and signatures name a signal

namespace gauntlet {

struct ProcessSpec {
  std::vector<std::string> argv;           // argv[0] without '/' is looked up in env PATH
  std::map<std::string, std::string> env;  // the whole environment of the child
  std::string cwd;
};

struct ExitInfoProc {
  std::optional<int> exit_code;  // set when it exited
  std::optional<int> signal;     // set when a signal ended it
  bool timed_out = false;        // we stopped it at its deadline
  bool stopped = false;          // we stopped it on request (cancel, lease lost, drain)
};

// Resolves argv[0] against a PATH value; returns it unchanged if it holds a '/' or is not found.
std::string FindProgram(const std::string& name, const std::string& path);

class Process {
 public:
  // Starts the process; NotFound if the program does not exist or is not executable.
  static Result<std::unique_ptr<Process>> Start(const ProcessSpec& spec);
  ~Process();  // stops the group if still running

  pid_t pid() const { return pid_; }
  // Pumps output to `on_output` until the process exits, `deadline` passes (then stops it: timed_out)
  // or `should_stop` returns true (checked every `poll`; then stops it: stopped). After the leader
  // exits, the rest of its group is stopped too, so no descendant outlives the stage.
  ExitInfoProc Run(std::chrono::steady_clock::time_point deadline,
                   const std::function<void(std::string_view)>& on_output, const std::function<bool()>& should_stop,
                   std::chrono::milliseconds grace = std::chrono::seconds(5),
                   std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  // Sends SIGTERM to the group, waits up to `grace` for the group to be gone, then SIGKILLs it.
  void StopGroup(std::chrono::milliseconds grace);
  // Non-blocking check: has the leader exited? Fills `out` if so.
  bool Reap(ExitInfoProc* out);
  int output_fd() const { return out_fd_; }

 private:
  Process() = default;
  bool GroupAlive() const;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool reaped_ = false;
  ExitInfoProc exit_;
};

}  // namespace gauntlet
