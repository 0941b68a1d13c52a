// The last steps of a stage's leader before its program, in the child of a fork or vfork: its
// output, its user, its own mounts, its folder, then exec. Shared by the stage keeper
// (proc/stage_keeper.h) and, where a stage has a PID namespace, its init (proc/stage_init.h).
#pragma once
#include "proc/stage_keeper.h"

namespace gauntlet::proc {

// Enters a mount namespace of its own and mounts `a`'s binds (as root, before the user is
// dropped), then, when `with_proc`, a proc of the PID namespace it is in over /proc. Follows
// mounts made elsewhere (a slave of the host's), and none of its own reach the host. Returns
// false, with a line on fd 2, when one step fails. Async-signal-safe; safe in a vfork child.
bool EnterOwnMounts(const KeeperArgs& a, bool with_proc);

// Becomes the stage's program: stdin /dev/null, fds 1 and 2 the output pipe, the trial's user
// (when set), its own mounts (when `a.own_mounts` and `mounts_here`), its folder, then execve.
// Dies with `parent` (PR_SET_PDEATHSIG) and exits 126/127 with a line on fd 2 when a step fails.
// Async-signal-safe; safe in a vfork child.
[[noreturn]] void ExecLeader(const KeeperArgs& a, pid_t parent, bool mounts_here);

}  // namespace gauntlet::proc
