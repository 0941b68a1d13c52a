#include "proc/stage_init.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "proc/stage_leader.h"

namespace gauntlet::proc {

void RunStageInit(const KeeperArgs& a, int go_r) {
  // The keeper's signals (SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD) stay blocked, as the keeper
  // left them: queued, never acted on, so only SIGKILL ends the init, and with it the namespace.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Retried on any error, not on EINTR alone: errno is shared with the keeper (proc/stage_keeper.cc).
  char go = 0;
  ssize_t r = -1;
  for (int tries = 0; tries < 100 && r < 0; ++tries) r = read(go_r, &go, 1);
  close(go_r);
  if (r != 1) _exit(127);  // the keeper is gone before it said go
  if (!EnterOwnMounts(a, true)) _exit(126);
  pid_t leader = vfork();
  if (leader < 0) _exit(127);
  if (leader == 0) ExecLeader(a, 1, false);
  close(a.out_w);
  // Reap everything: the leader (whose status the keeper passes on through us) and every orphan of
  // the namespace, which the kernel gives to PID 1. Once none is left, the namespace is empty.
  while (true) {
    int st = 0;
    pid_t p = waitpid(-1, &st, 0);
    if (p == leader) {
      const int32_t v = st;
      for (int tries = 0; tries < 100 && write(a.status_w, &v, sizeof v) < 0; ++tries) {
      }
      continue;
    }
    // ECHILD: nothing left. (A value the keeper wrote to the shared errno only means one more round.)
    if (p < 0 && errno == ECHILD) _exit(0);
  }
}

}  // namespace gauntlet::proc
