// The stage keeper: the process the worker forks for every process it supervises, between the
// worker and the stage's leader. It is a child subreaper (PR_SET_CHILD_SUBREAPER), so whatever the
// stage leaves behind — a grandchild that called setsid, a double fork, an `env -i` that dropped
// every marker — is re-parented to it and to nothing else: it knows exactly which orphans belong to
// its stage, where the worker (the subreaper of every stage at once) could not tell. It lives until
// the last of them is gone (docs/DECISIONS.md "Containment").
//
// Protocol with the worker (proc/process.cc):
//   status pipe: the keeper writes the leader's pid, then (once reaped) its wait status, each an
//                int32 in host order;
//   SIGTERM/SIGINT/SIGHUP to the keeper: it sends SIGTERM to every descendant, in the group or not;
//   SIGUSR1: it SIGKILLs every descendant until none is left, reaps them and exits 0;
//   the leader reaped and no descendant left: it exits 0;
//   the worker gone (its parent changed): it SIGKILLs every descendant and exits.
// A keeper that exits 0 had no child left, so no process of its stage was re-parented past it to
// the worker (proc/process.h KillStrayChildren relies on this); any other end (a signal, an early
// 127, kKeeperGaveUp) may have left orphans to the worker.
#pragma once
#include <sys/types.h>

#include <cstddef>

namespace gauntlet::proc {

// The keeper's exit status when SIGKILL rounds could not empty its stage (a descendant stuck in
// the kernel): what is left is the cgroup's and the worker's sweep's to end.
inline constexpr int kKeeperGaveUp = 125;

inline constexpr size_t kMaxCgroupFolders = 3;

struct KeeperArgs {
  const char* prog = nullptr;     // resolved program path
  char** argv = nullptr;          // null-terminated
  char** envp = nullptr;          // null-terminated: the leader's whole environment
  const char* cwd = nullptr;      // "" or null: stay where the worker is
  int out_w = -1;                 // the merged output pipe's write end: the leader's fd 1 and 2
  int status_w = -1;              // the status pipe's write end (close-on-exec)
  // Open "cgroup.procs" files of the stage's cgroup folders (v2, v1 memory, v1 pids), or -1.
  int cgroup_procs[kMaxCgroupFolders] = {-1, -1, -1};
  pid_t worker = 0;               // the worker's pid, the keeper's parent
  long uid = -1, gid = -1;        // the leader's user and group when >= 0 (it drops to them before exec)
  // The stage's own view (ProcessSpec::view): a mount namespace with `binds` binds (sources and
  // targets, at most kMaxBinds), and with own_pids a PID namespace under an init
  // (proc/stage_init.h) between the keeper and the leader.
  bool own_mounts = false;
  bool own_pids = false;
  const char* const* bind_sources = nullptr;
  const char* const* bind_targets = nullptr;
  size_t binds = 0;
};
inline constexpr size_t kMaxBinds = 16;

// Runs in the child right after fork() and never returns. Async-signal-safe only: the worker is
// multi-threaded, so nothing here allocates or takes a lock.
[[noreturn]] void RunKeeper(const KeeperArgs& a);

}  // namespace gauntlet::proc
