#include "proc/stage_keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdint>

#include "proc/proc_table.h"

namespace gauntlet::proc {

namespace {

// The keeper is single-threaded: its table buffers can be static (copy-on-write pages of the
// worker's, never touched by it).
constexpr size_t kMaxProcs = 32768;
pid_t g_desc[kMaxProcs], g_scratch_pid[kMaxProcs], g_scratch_ppid[kMaxProcs];
pid_t g_leader = -1;
bool g_leader_done = false;
int g_status_w = -1;

void WriteInt(int fd, int32_t v) {
  ssize_t r;
  do r = write(fd, &v, sizeof v);
  while (r < 0 && errno == EINTR);
}

void Sleep(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

// Reaps what has ended; returns false once the keeper has no child left.
bool ReapSome() {
  while (true) {
    int st = 0;
    pid_t r = waitpid(-1, &st, WNOHANG);
    if (r > 0) {
      if (r == g_leader && !g_leader_done) {
        g_leader_done = true;
        WriteInt(g_status_w, st);
      }
      continue;
    }
    return !(r < 0 && errno == ECHILD);
  }
}

void SignalDescendants(int sig) {
  size_t n = ListDescendants(getpid(), g_desc, kMaxProcs, g_scratch_pid, g_scratch_ppid, kMaxProcs);
  for (size_t i = 0; i < n; ++i) kill(g_desc[i], sig);
}

// SIGKILL everything below the keeper until nothing is left: a descendant that forks meanwhile is
// caught by the next round, since its child is re-parented to the keeper when it dies. Bounded, in
// case something is stuck in the kernel (the worker then falls back to the cgroup, if any); a
// keeper that gives up exits kKeeperGaveUp, so the worker knows its stage may have left orphans.
[[noreturn]] void KillAllAndExit() {
  for (int round = 0; round < 1000; ++round) {
    SignalDescendants(SIGKILL);
    if (!ReapSome()) _exit(0);
    Sleep(5);
  }
  _exit(kKeeperGaveUp);
}

void CloseRange(int lo, int hi) {
  if (lo > hi) return;
  if (syscall(SYS_close_range, static_cast<unsigned>(lo), static_cast<unsigned>(hi), 0u) == 0) return;
  for (int fd = lo; fd <= hi && fd < 65536; ++fd) close(fd);  // kernels before 5.9
}

// The keeper does not exec, so it would hold every descriptor of the worker, close-on-exec or not:
// its sockets to the daemon (a close by the worker would then not reach the daemon) and its
// workdir lock. It keeps stdio and the three it needs.
void CloseAllBut(int a, int b, int c) {
  int keep[3] = {a, b, c};
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (keep[j] < keep[i]) {
        int t = keep[i];
        keep[i] = keep[j];
        keep[j] = t;
      }
  int from = 3;
  for (int k : keep) {
    if (k < from) continue;
    CloseRange(from, k - 1);
    from = k + 1;
  }
  CloseRange(from, INT_MAX);
}

[[noreturn]] void ExecLeader(const KeeperArgs& a, pid_t keeper) {
  // The leader dies with its keeper, so a keeper killed outright leaves at most the leader's own
  // escapes, which the worker's sweep (KillStrayChildren) and the cgroup take.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != keeper) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(a.out_w, 1);
  dup2(a.out_w, 2);
  // To the trial's user: raw system calls, which change this process alone (glibc's setresuid
  // would try to signal the worker's threads, whose list this copy of its memory still holds).
  if (a.gid >= 0 && (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setresgid, a.gid, a.gid, a.gid) != 0)) {
    const char msg[] = "gauntlet: cannot take the trial's group\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(126);
  }
  if (a.uid >= 0 && syscall(SYS_setresuid, a.uid, a.uid, a.uid) != 0) {
    const char msg[] = "gauntlet: cannot take the trial's user\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(126);
  }
  if (a.cwd && *a.cwd && chdir(a.cwd) != 0) _exit(126);
  execve(a.prog, a.argv, a.envp);
  if (errno == EACCES && a.uid >= 0) {
    const char msg[] = "gauntlet: exec failed: permission denied: the trial's user cannot run the program (a folder on its path is closed to other users)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(126);
  }
  const char msg[] = "gauntlet: exec failed\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(127);
}

}  // namespace

void RunKeeper(const KeeperArgs& a) {
  CloseAllBut(a.out_w, a.status_w, a.cgroup_procs);
  // The status pipe's reader is the worker: once it is gone, a write must fail, not kill the keeper
  // before it has ended the stage. (The leader gets SIGPIPE back before its exec.)
  signal(SIGPIPE, SIG_IGN);
  setpgid(0, 0);
  if (getppid() != a.worker) _exit(127);
  if (a.cgroup_procs >= 0) {
    // Into the stage's cgroup before anything forks: all that follows is born inside it.
    (void)!write(a.cgroup_procs, "0", 1);
    close(a.cgroup_procs);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  g_status_w = a.status_w;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  const pid_t self = getpid();
  // vfork: the leader borrows the keeper's memory until its exec instead of copying its page
  // tables, which are the worker's whole address space (a fork of it per stage was the second of
  // two per trial: issue 31). ExecLeader only makes system calls on its own stack before the exec
  // or _exit, as a vfork child must; the keeper waits meanwhile.
  pid_t leader = vfork();
  if (leader < 0) _exit(127);
  if (leader == 0) ExecLeader(a, self);
  g_leader = leader;
  close(a.out_w);
  WriteInt(g_status_w, leader);
  const timespec tick{0, 200 * 1000000L};
  while (true) {
    if (!ReapSome() && g_leader_done) _exit(0);
    if (getppid() != a.worker) KillAllAndExit();  // the worker died: nothing of the stage stays
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &tick);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) SignalDescendants(SIGTERM);
    else if (sig == SIGUSR1) KillAllAndExit();
  }
}

}  // namespace gauntlet::proc
