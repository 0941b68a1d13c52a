// SIGINT/SIGTERM handling shared by `serve` and `worker`: the signals are blocked in every thread
// (so none is interrupted at random) and one thread waits for them with sigwait.
#pragma once
#include <signal.h>

namespace gauntlet {

// Blocks SIGINT and SIGTERM in the calling thread and every thread it starts later, ignores
// SIGPIPE (a peer closing a socket is an error code, not a death); returns the set to sigwait on.
// Call first in main's command, before any thread exists.
inline sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return set;
}

}  // namespace gauntlet
