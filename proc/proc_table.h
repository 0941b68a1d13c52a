// The process table as /proc shows it, read without allocating: safe in a child between fork and
// exec (the stage keeper, proc/stage_keeper.h). Children come from /proc/PID/stat's ppid, since
// /proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN, which not every kernel has.
#pragma once
#include <sys/types.h>

#include <cstddef>

namespace gauntlet::proc {

// Fills `out` (capacity `cap`) with every live descendant of `root` (children, theirs, ...), in no
// particular order, from one scan of /proc; returns how many. Zombies count (they are reaped by
// their parent, not killed). `scratch_pid`/`scratch_ppid` hold `scratch_cap` entries of the table.
// Async-signal-safe; not thread-safe on shared buffers.
size_t ListDescendants(pid_t root, pid_t* out, size_t cap, pid_t* scratch_pid, pid_t* scratch_ppid,
                       size_t scratch_cap);

// The parent of `pid` per /proc/PID/stat; -1 if it is gone. Async-signal-safe.
pid_t ParentOf(pid_t pid);

}  // namespace gauntlet::proc
