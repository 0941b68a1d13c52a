#include "proc/stage_keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdint>

#include "proc/proc_table.h"
#include "proc/stage_init.h"
#include "proc/stage_leader.h"

namespace gauntlet::proc {

namespace {

// The keeper is single-threaded: its table buffers can be static (copy-on-write pages of the
// worker's, never touched by it).
constexpr size_t kMaxProcs = 32768;
pid_t g_desc[kMaxProcs], g_scratch_pid[kMaxProcs], g_scratch_ppid[kMaxProcs];
pid_t g_leader = -1;
bool g_leader_done = false;
bool g_under_init = false;  // g_leader is the init of the stage's PID namespace

// The init's stack and arguments (proc/stage_init.h). It runs in the keeper's memory (CLONE_VM) but
// is a process of its own, with its own descriptors and signals; it touches only this stack and
// reads the keeper's arguments, which stay put in the keeper's frame. Both share errno (one TLS
// block): each side's errno checks only decide whether to try again, never to give up, so a value
// the other side wrote costs at most one more round.
alignas(64) char g_init_stack[64 * 1024];
struct InitCall {
  const KeeperArgs* args;
  int go_r, go_w;
} g_init_call;

int InitMain(void* p) {
  const InitCall* c = static_cast<const InitCall*>(p);
  close(c->go_w);
  RunStageInit(*c->args, c->go_r);
}
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
        // An init that exits 0 wrote its leader's status itself (proc/stage_init.h).
        if (!(g_under_init && WIFEXITED(st) && WEXITSTATUS(st) == 0)) WriteInt(g_status_w, st);
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

}  // namespace

void RunKeeper(const KeeperArgs& a) {
  // Into the stage's cgroups before anything forks: all that follows is born inside them.
  for (int fd : a.cgroup_procs)
    if (fd >= 0) {
      (void)!write(fd, "0", 1);
      close(fd);
    }
  CloseAllBut(a.out_w, a.status_w, -1);
  // The status pipe's reader is the worker: once it is gone, a write must fail, not kill the keeper
  // before it has ended the stage. (The leader gets SIGPIPE back before its exec.)
  signal(SIGPIPE, SIG_IGN);
  setpgid(0, 0);
  if (getppid() != a.worker) _exit(127);
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
  pid_t leader;
  int go[2] = {-1, -1};
  if (a.own_pids) {
    // The next child is PID 1 of a namespace of its own: the stage's init, which starts the leader
    // once the keeper has said its pid (proc/stage_init.h). It lives on, so not a vfork; and not a
    // fork either, whose copy of the worker-sized page tables cost 2 ms a stage (docs/BENCHMARKS.md
    // "Stage start and end to end ..."): it shares the keeper's memory (CLONE_VM) on a stack of its own.
    if (pipe2(go, O_CLOEXEC) != 0 || syscall(SYS_unshare, CLONE_NEWPID) != 0) {
      const char msg[] = "gauntlet: cannot make the stage's own PID namespace (unshare)\n";
      (void)!write(a.out_w, msg, sizeof msg - 1);
      _exit(126);
    }
    g_init_call = {&a, go[0], go[1]};
    leader = clone(InitMain, g_init_stack + sizeof g_init_stack, CLONE_VM | SIGCHLD, &g_init_call);
    close(go[0]);
    g_under_init = true;
  } else {
    leader = vfork();
    if (leader == 0) ExecLeader(a, self, true);
  }
  if (leader < 0) _exit(127);
  g_leader = leader;
  close(a.out_w);
  WriteInt(g_status_w, leader);
  if (go[1] >= 0) {
    (void)!write(go[1], "g", 1);
    close(go[1]);
  }
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
