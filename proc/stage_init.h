// The init of a stage's own PID namespace (docs/DECISIONS.md "Its own view of the machine"): the
// keeper's child and PID 1 of the namespace, between the keeper and the stage's leader. A process
// the stage starts sees only its stage in /proc and cannot signal anything outside it.
//
// Why an init of ours rather than the leader as PID 1: the kernel drops any signal to a namespace's
// PID 1 that it has no handler for, so a shell leader would ignore the keeper's SIGTERM; and every
// orphan of the namespace goes to PID 1, which a leader would never reap. This one reaps them all,
// holds its signals blocked (the keeper's SIGTERM reaches each process of the stage directly; its
// SIGKILL to the init ends the whole namespace at once), and reports the leader's end itself.
//
// Protocol, inside the keeper's (proc/stage_keeper.h): the keeper writes the init's pid as the
// leader's on the status pipe, then a byte on `go`; only then does the init start the leader, and
// write the leader's wait status on the status pipe when it is reaped. The init exits 0 once no
// process of the namespace is left; any other end (a failed mount: 126, a signal) means it wrote
// no status, and the keeper writes the init's own.
#pragma once
#include "proc/stage_keeper.h"

namespace gauntlet::proc {

// Runs as PID 1 of the new namespace, right after the keeper's fork; never returns.
// Async-signal-safe only (a copy of the multi-threaded worker's memory).
[[noreturn]] void RunStageInit(const KeeperArgs& a, int go_r);

}  // namespace gauntlet::proc
