#include "proc/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "proc/proc_table.h"
#include "proc/stage_keeper.h"

namespace gauntlet::proc {

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

namespace {
// Every keeper this process has started and not yet reaped. Held across fork, so a sweep of stray
// children never sees a keeper whose pid is not recorded yet.
std::mutex g_children_mu;
std::set<pid_t> g_keepers;

// Keepers reaped after an end that may have left orphans to this process (any end but exit 0:
// proc/stage_keeper.h), and that count as of the last sweep of stray children. Only through such
// an end does a process come here that no Process started, so a sweep with no such end since the
// last one has nothing to find and is skipped: it reads a file per thread of the worker, and it
// ran three times per trial (issue 31). The first sweep always runs.
std::atomic<uint64_t> g_untidy_keeper_ends{0};
std::atomic<uint64_t> g_swept_through{UINT64_MAX};

void NoteKeeperEnd(int wait_status) {
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) g_untidy_keeper_ends.fetch_add(1);
}

void SetWaitStatus(int st, ExitInfoProc* e) {
  if (WIFEXITED(st)) e->exit_code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) e->signal = WTERMSIG(st);
}

// This process's children, from each thread's /proc/self/task/TID/children (a child's parent is
// the thread that forked it, or for an orphan the thread that took it): a few small reads, where
// the whole process table is one open and read per process of the machine (hundreds on a shared
// host, three times per trial: issue 31). False where the kernel has no such files.
bool ChildrenOfSelf(std::vector<pid_t>* out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  bool any_file = false;
  for (auto& t : fs::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(t.path() / "children");
    if (!in) continue;
    any_file = true;
    pid_t p;
    while (in >> p) out->push_back(p);
  }
  return any_file;
}

// Direct children of this process that are not stage keepers (g_children_mu held).
std::vector<pid_t> StrayChildrenLocked() {
  std::vector<pid_t> out;
  if (!ChildrenOfSelf(&out)) {
    constexpr size_t kMax = 32768;
    std::vector<pid_t> desc(kMax), spid(kMax), sppid(kMax);
    size_t n = ListDescendants(getpid(), desc.data(), kMax, spid.data(), sppid.data(), kMax);
    for (size_t i = 0; i < n; ++i)
      if (ParentOf(desc[i]) == getpid()) out.push_back(desc[i]);
  }
  std::erase_if(out, [](pid_t p) { return g_keepers.count(p) > 0; });
  return out;
}
}  // namespace

int KillStrayChildren() {
  const uint64_t untidy = g_untidy_keeper_ends.load();
  if (g_swept_through.load() == untidy) return 0;  // no keeper has ended untidily since the last sweep
  int is_subreaper = 0;
  prctl(PR_GET_CHILD_SUBREAPER, &is_subreaper);
  if (!is_subreaper) return 0;  // orphans go to init, not here: there are no strays to take
  std::lock_guard lock(g_children_mu);
  // Set before the sweep: a keeper that ends untidily meanwhile makes the next call sweep again.
  g_swept_through = untidy;
  int killed = 0;
  // Rounds, because a stray's own children are re-parented here only once it is dead.
  for (int round = 0; round < 50; ++round) {
    const std::vector<pid_t> strays = StrayChildrenLocked();
    int this_round = 0;
    for (const pid_t p : strays) {
      kill(p, SIGKILL);
      ++this_round;
      // SIGKILL is prompt unless the process is inside the kernel (a GPU driver's teardown): bounded.
      for (int k = 0; k < 200 && waitpid(p, nullptr, WNOHANG) == 0; ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    killed += this_round;
    if (this_round == 0) break;
  }
  return killed;
}

Result<std::unique_ptr<Process>> Process::Start(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Status::Invalid("empty argv", "argv");
  if (spec.view && spec.view->binds.size() > kMaxBinds)
    return Status::Invalid("more than " + std::to_string(kMaxBinds) + " binds in a process's own view", "view");
  auto path_it = spec.env.find("PATH");
  const std::string prog = FindProgram(spec.argv[0], path_it == spec.env.end() ? "/usr/bin:/bin" : path_it->second);
  if (access(prog.c_str(), X_OK) != 0)
    return Status::NotFound("program '" + spec.argv[0] + "' was not found or is not executable");
  int fds[2], st[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Internal(std::string("pipe: ") + strerror(errno));
  if (pipe2(st, O_CLOEXEC) != 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::Internal(std::string("pipe: ") + strerror(errno));
  }
  std::unique_ptr<StageCgroup> cgroup = StageCgroup::Create(spec.memory_limit_bytes, spec.pids_limit, spec.limits_declared);
  KeeperArgs ka;
  if (cgroup) {
    const std::vector<std::string> files = cgroup->ProcsFiles();
    for (size_t i = 0; i < files.size() && i < kMaxCgroupFolders; ++i)
      ka.cgroup_procs[i] = open(files[i].c_str(), O_WRONLY | O_CLOEXEC);
  }
  // Everything the children need is built before fork: after fork only async-signal-safe calls.
  std::vector<std::string> env_strs;
  for (auto& [k, v] : spec.env) env_strs.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strs) envp.push_back(e.data());
  envp.push_back(nullptr);
  ka.prog = prog.c_str();
  ka.argv = argv.data();
  ka.envp = envp.data();
  ka.cwd = spec.cwd.c_str();
  ka.out_w = fds[1];
  ka.status_w = st[1];
  ka.worker = getpid();
  std::vector<const char*> bind_src, bind_dst;
  if (spec.view) {
    for (const OwnView::Bind& b : spec.view->binds) {
      bind_src.push_back(b.source.c_str());
      bind_dst.push_back(b.target.c_str());
    }
    ka.own_mounts = true;
    ka.own_pids = spec.view->own_pids;
    ka.bind_sources = bind_src.data();
    ka.bind_targets = bind_dst.data();
    ka.binds = bind_src.size();
  }
  if (spec.uid) ka.uid = static_cast<long>(*spec.uid);
  if (spec.gid) ka.gid = static_cast<long>(*spec.gid);
  pid_t pid;
  {
    std::lock_guard lock(g_children_mu);
    // _Fork, not fork: the keeper makes only async-signal-safe calls (proc/stage_keeper.h), so it
    // needs neither the atfork handlers nor malloc's arenas locked across the fork, whose unlock
    // on both sides wrote (copied) a page per arena right after every fork (issue 31).
    pid = _Fork();
    if (pid == 0) RunKeeper(ka);
    if (pid > 0) g_keepers.insert(pid);
  }
  for (int fd : ka.cgroup_procs)
    if (fd >= 0) close(fd);
  close(fds[1]);
  close(st[1]);
  if (pid < 0) {
    close(fds[0]);
    close(st[0]);
    return Status::Internal(std::string("fork: ") + strerror(errno));
  }
  setpgid(pid, pid);  // also from the parent: no race with a StopGroup right after Start
  std::unique_ptr<Process> p(new Process);
  p->pid_ = pid;
  p->out_fd_ = fds[0];
  p->status_fd_ = st[0];
  p->cgroup_ = std::move(cgroup);
  fcntl(p->out_fd_, F_SETFL, fcntl(p->out_fd_, F_GETFL) | O_NONBLOCK);
  fcntl(p->status_fd_, F_SETFL, fcntl(p->status_fd_, F_GETFL) | O_NONBLOCK);
  return p;
}

Process::~Process() {
  if (!keeper_reaped_) StopGroup(std::chrono::milliseconds(200));
  Contain();
  if (out_fd_ >= 0) close(out_fd_);
  if (status_fd_ >= 0) close(status_fd_);
}

void Process::ReadStatus() {
  char buf[64];
  while (status_fd_ >= 0) {
    ssize_t n = read(status_fd_, buf, sizeof buf);
    if (n <= 0) break;
    status_buf_.append(buf, static_cast<size_t>(n));
  }
  int32_t v;
  if (leader_ < 0 && status_buf_.size() >= 4) {
    memcpy(&v, status_buf_.data(), 4);
    leader_ = v;
  }
  if (!leader_done_ && status_buf_.size() >= 8) {
    memcpy(&v, status_buf_.data() + 4, 4);
    leader_done_ = true;
    SetWaitStatus(v, &exit_);
  }
}

void Process::AwaitStatus(std::chrono::milliseconds max) {
  if (status_fd_ < 0) {
    std::this_thread::sleep_for(max);
    return;
  }
  pollfd pfd{status_fd_, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(std::max<int64_t>(0, max.count()))) <= 0) return;
  ReadStatus();
  // Closed: the keeper is exiting, and is reapable a moment later. A short pause, not a spin.
  if (pfd.revents & (POLLHUP | POLLERR)) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

bool Process::AwaitKeeper(std::chrono::milliseconds max) {
  const auto until = std::chrono::steady_clock::now() + max;
  while (!KeeperGone()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return KeeperGone();
    AwaitStatus(std::min<std::chrono::milliseconds>(left, std::chrono::milliseconds(10)));
  }
  return true;
}

bool Process::KeeperGone() {
  if (keeper_reaped_) return true;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) != pid_) return false;
  {
    std::lock_guard lock(g_children_mu);
    g_keepers.erase(pid_);
    keeper_reaped_ = true;
  }
  NoteKeeperEnd(st);
  keeper_status_ = st;
  ReadStatus();
  // A keeper that ended without the leader's status was killed itself: its own end stands for it.
  if (!leader_done_) {
    leader_done_ = true;
    SetWaitStatus(st, &exit_);
  }
  return true;
}

void Process::Contain() {
  if (cgroup_) cgroup_->KillAndRemove(std::chrono::seconds(2));
  KillStrayChildren();
}

bool Process::Reap(ExitInfoProc* out) {
  ReadStatus();
  if (!leader_done_) KeeperGone();
  if (!leader_done_) return false;
  if (out) *out = exit_;
  return true;
}

void Process::StopGroup(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  // The leader has ended: with nothing else left the keeper exits by itself a moment after writing
  // its status. Waiting that moment spares it the SIGTERM below, on which it walks the process table.
  if (leader_done_ && !KeeperGone()) AwaitKeeper(std::min(grace, std::chrono::milliseconds(5)));
  if (!KeeperGone()) {
    // The group, and through the keeper every descendant that left it.
    kill(-pid_, SIGTERM);
    kill(pid_, SIGTERM);
    // Woken by the keeper's status pipe closing as it exits (a fixed 10 ms sleep here cost every
    // stage that much: issue 31).
    AwaitKeeper(grace);
  }
  if (!KeeperGone()) {
    kill(pid_, SIGUSR1);  // the keeper SIGKILLs all it has until none is left, then exits
    AwaitKeeper(std::chrono::seconds(3));
  }
  if (!KeeperGone()) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int st = 0;
    waitpid(pid_, &st, 0);
    {
      std::lock_guard lock(g_children_mu);
      g_keepers.erase(pid_);
      keeper_reaped_ = true;
    }
    NoteKeeperEnd(st);
    ReadStatus();
    if (!leader_done_) {
      leader_done_ = true;
      SetWaitStatus(st, &exit_);
    }
  }
  Contain();
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
      // Output closed but the leader's status is not in yet: wait for the keeper's record of it
      // (or its exit) on the status pipe, woken the moment it comes. A fixed 20 ms sleep here was
      // most of a trivial stage's time: the keeper writes the status just after the output closes.
      AwaitStatus(std::min<std::chrono::milliseconds>(wait, std::chrono::milliseconds(20)));
    }
  }
  // A stop, a timeout, or a leader gone with descendants left (daemonized helpers, a stray server,
  // a setsid grandchild holding GPU memory): a stage owns all it started, so they end with it.
  // The keeper exits by itself once nothing is left; StopGroup with nothing left just reaps it.
  StopGroup(grace);
  drain();
  ExitInfoProc out = exit_;
  out.timed_out = timed_out;
  out.stopped = stopped;
  if (cgroup_) {
    // The cgroup is gone by now; its counters were read on the way (KillAndRemove). The kernel
    // kills a member at memory.max with SIGKILL: only memory.events tells that from any SIGKILL.
    out.memory_limit_bytes = cgroup_->memory_limit();
    out.oom_killed = cgroup_->memory_events().oom_kill > 0;
    out.pids_limit = cgroup_->pids_limit();
    out.pids_limited = cgroup_->pids_events().max > 0;
  }
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

// Matches a process by its environment, not its parent: what a SIGKILLed worker left was
// re-parented, and its stage keeper died with it.
void KillTrialLeftovers(const std::string& workdir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string needle = "GAUNTLET_WORKDIR=" + workdir + "/trial-";
  int killed = 0;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.empty() || !isdigit(static_cast<unsigned char>(pid[0])) || std::stoi(pid) == getpid()) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), {});
    size_t at = env.find(needle);
    if (at != std::string::npos && (at == 0 || env[at - 1] == '\0')) {
      if (kill(std::stoi(pid), SIGKILL) == 0) ++killed;
    }
  }
  for (auto& e : fs::directory_iterator(workdir, ec))
    if (e.path().filename().string().rfind("trial-", 0) == 0 || e.path().filename().string().rfind("view-", 0) == 0)
      fs::remove_all(e.path(), ec);
  if (killed) spdlog::warn("killed {} process(es) left by an earlier run of this worker", killed);
}

}  // namespace gauntlet::proc
