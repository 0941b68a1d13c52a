#include "workers/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace gauntlet {

std::string FindProgram(const std::string& name, const std::string& path) {
  if (name.find('/') != std::string::npos) return name;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find(':', i);
    if (j == std::string::npos) j = path.size();
    std::string dir = path.substr(i, j - i);
    if (!dir.empty()) {
      std::string cand = dir + "/" + name;
      struct stat st;
      if (stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(cand.c_str(), X_OK) == 0) return cand;
    }
    i = j + 1;
  }
  return name;
}

Result<std::unique_ptr<Process>> Process::Start(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Status::Invalid("empty argv", "argv");
  auto path_it = spec.env.find("PATH");
  const std::string prog = FindProgram(spec.argv[0], path_it == spec.env.end() ? "/usr/bin:/bin" : path_it->second);
  if (access(prog.c_str(), X_OK) != 0)
    return Status::NotFound("program '" + spec.argv[0] + "' was not found or is not executable");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Internal(std::string("pipe: ") + strerror(errno));
  // Everything the child needs is built before fork: after fork only async-signal-safe calls.
  std::vector<std::string> env_strs;
  for (auto& [k, v] : spec.env) env_strs.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strs) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::Internal(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    // If the worker dies, the stage's leader dies with it (its descendants are swept by the next
    // worker start from the recorded process group).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) _exit(126);
    execve(prog.c_str(), argv.data(), envp.data());
    const char msg[] = "gauntlet: exec failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent: no race with a StopGroup right after Start
  close(fds[1]);
  std::unique_ptr<Process> p(new Process);
  p->pid_ = pid;
  p->out_fd_ = fds[0];
  fcntl(p->out_fd_, F_SETFL, fcntl(p->out_fd_, F_GETFL) | O_NONBLOCK);
  return p;
}

Process::~Process() {
  if (!reaped_ || GroupAlive()) StopGroup(std::chrono::milliseconds(200));
  if (out_fd_ >= 0) close(out_fd_);
}

bool Process::GroupAlive() const { return pid_ > 0 && kill(-pid_, 0) == 0; }

bool Process::Reap(ExitInfoProc* out) {
  if (reaped_) {
    if (out) *out = exit_;
    return true;
  }
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r != pid_) return false;
  reaped_ = true;
  if (WIFEXITED(st)) exit_.exit_code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) exit_.signal = WTERMSIG(st);
  if (out) *out = exit_;
  return true;
}

void Process::StopGroup(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  kill(-pid_, SIGTERM);
  auto until = std::chrono::steady_clock::now() + grace;
  // Poll for the group's end: there is no wait-for-group call, and the grace is short.
  while (std::chrono::steady_clock::now() < until) {
    Reap(nullptr);
    if (!GroupAlive()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (GroupAlive()) kill(-pid_, SIGKILL);
  if (!reaped_) {
    int st = 0;
    if (waitpid(pid_, &st, 0) == pid_) {
      reaped_ = true;
      if (WIFEXITED(st)) exit_.exit_code = WEXITSTATUS(st);
      if (WIFSIGNALED(st)) exit_.signal = WTERMSIG(st);
    }
  }
}

ExitInfoProc Process::Run(std::chrono::steady_clock::time_point deadline,
                          const std::function<void(std::string_view)>& on_output,
                          const std::function<bool()>& should_stop, std::chrono::milliseconds grace,
                          std::chrono::milliseconds poll_every) {
  char buf[65536];
  bool eof = false;
  bool timed_out = false, stopped = false;
  auto drain = [&] {
    while (true) {
      ssize_t n = read(out_fd_, buf, sizeof buf);
      if (n > 0) {
        on_output(std::string_view(buf, static_cast<size_t>(n)));
        continue;
      }
      if (n == 0) eof = true;
      return;
    }
  };
  while (true) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    if (should_stop && should_stop()) {
      stopped = true;
      break;
    }
    auto wait = std::min<std::chrono::milliseconds>(
        poll_every, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) + std::chrono::milliseconds(1));
    if (!eof) {
      pollfd pfd{out_fd_, POLLIN, 0};
      ::poll(&pfd, 1, static_cast<int>(wait.count()));
      drain();
    }
    if (Reap(nullptr)) break;
    if (eof) {
      // Output closed but the leader lives: wait for it without spinning.
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(wait.count(), 20)));
    }
  }
  if (timed_out || stopped) {
    StopGroup(grace);
  } else if (GroupAlive()) {
    // The leader is gone but descendants linger (daemonized helpers, a stray server): a stage owns
    // its whole group, so they end with it.
    StopGroup(grace);
  }
  drain();
  ExitInfoProc out = exit_;
  out.timed_out = timed_out;
  out.stopped = stopped;
  return out;
}

namespace {

// A Process behind the RunningProcess interface; Process's own destructor stops the group.
class SupervisedProcess final : public RunningProcess {
 public:
  explicit SupervisedProcess(std::unique_ptr<Process> p) : p_(std::move(p)) {}
  ExitInfoProc Run(std::chrono::steady_clock::time_point deadline,
                   const std::function<void(std::string_view)>& on_output, const std::function<bool()>& should_stop,
                   std::chrono::milliseconds grace, std::chrono::milliseconds poll) override {
    return p_->Run(deadline, on_output, should_stop, grace, poll);
  }
  void StopGroup(std::chrono::milliseconds grace) override { p_->StopGroup(grace); }

 private:
  std::unique_ptr<Process> p_;
};

}  // namespace

Result<std::unique_ptr<RunningProcess>> SystemProcessRunner::Start(const ProcessSpec& spec) {
  auto p = Process::Start(spec);
  if (!p.ok()) return p.status();
  return std::unique_ptr<RunningProcess>(std::make_unique<SupervisedProcess>(std::move(*p)));
}

}  // namespace gauntlet
