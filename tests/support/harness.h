// Test support: temporary folders, a real `gauntlet serve` / `gauntlet worker` process on loopback
// (port 0, read back from --port-file), an HTTP client, and waiting on conditions with deadlines.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "net/http_client.h"

namespace gauntlet::test {

// A fresh folder under /tmp, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const;  // returns the full path

 private:
  std::string path_;
};

// The gauntlet binary (GAUNTLET_BIN from ctest, else build/bin/gauntlet) and the source folder.
std::string GauntletBin();
std::string SourceDir();
// SourceDir()/tests/fixtures/suites: the integration tests' own suites.
std::string FixtureSuites();
// Whether a process of this pid exists (signal 0; a zombie counts). False for pid <= 0, which
// kill() would read as a process group.
bool ProcessAlive(pid_t pid);
// ["0", "1", ..., "n-1"]: n distinct values of one sweep axis.
nlohmann::json CountingValues(int n);

// A child process with output to a file; killed (SIGKILL) on destruction if still running.
class Child {
 public:
  Child(std::vector<std::string> argv, const std::string& log_path, std::vector<std::string> extra_env = {});
  ~Child();
  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Waits for exit up to `timeout`; returns the exit status as from waitpid, or -1 on timeout.
  int Wait(std::chrono::milliseconds timeout);
  bool Running();
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_;
};

// Polls `pred` every few milliseconds until it is true or `timeout` passes; returns its last value.
bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A daemon on a free loopback port with its own database and suites folder.
class Daemon {
 public:
  // `extra` flags are appended to `gauntlet serve`.
  Daemon(const std::string& dir, const std::string& suites_dir, std::vector<std::string> extra = {});
  ~Daemon();
  void Start();           // (re)starts on the same database and port when possible
  void Kill();            // SIGKILL
  int Stop();             // SIGTERM and wait; returns the exit status
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  std::string db() const { return dir_ + "/gauntlet.db"; }
  Child& child() { return *child_; }
  std::string Log() const { return child_ ? child_->Log() : ""; }

  // Convenience calls; they fail the test (ADD_FAILURE) when the daemon cannot be reached, or does
  // not answer within request_timeout (30 s unless set: a test that floods the daemon with reads
  // queues its own calls behind them, and sets it as long as the readers may wait).
  void SetRequestTimeout(std::chrono::milliseconds t) { request_timeout_ = t; }
  net::ClientResponse Get(const std::string& target, const std::string& token = "");
  net::ClientResponse Post(const std::string& target, const std::string& body, const std::string& token = "");
  nlohmann::json GetJson(const std::string& target);
  nlohmann::json PostJson(const std::string& target, const nlohmann::json& body, int expect_status = 200);
  // Waits until the sweep is finished; returns the sweep JSON.
  nlohmann::json WaitSweep(int64_t sweep, std::chrono::milliseconds timeout = std::chrono::seconds(60));

 private:
  std::string dir_, suites_;
  std::vector<std::string> extra_;
  int port_ = 0;
  int starts_ = 0;
  std::chrono::milliseconds request_timeout_{std::chrono::seconds(30)};
  std::unique_ptr<Child> child_;
};

// A worker process with an inventory file.
std::unique_ptr<Child> StartWorker(const std::string& dir, const std::string& server, const std::string& name,
                                   const nlohmann::json& inventory, std::vector<std::string> extra = {});

}  // namespace gauntlet::test
