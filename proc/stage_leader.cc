#include "proc/stage_leader.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sched.h>

#include <cstring>

namespace gauntlet::proc {

namespace {
// One line on fd 2 (the stage's output, where its log shows it): `what` and, when `path`, the path.
void Say(const char* what, const char* path = nullptr) {
  (void)!write(2, "gauntlet: ", 10);
  (void)!write(2, what, strlen(what));
  if (path) {
    (void)!write(2, ": ", 2);
    (void)!write(2, path, strlen(path));
  }
  (void)!write(2, "\n", 1);
}

// "/proc/self/fd/N" into `buf` (at least 32 bytes): a mount source by descriptor, whatever has
// since been mounted over its path.
void FdPath(int fd, char* buf) {
  const char prefix[] = "/proc/self/fd/";
  memcpy(buf, prefix, sizeof prefix - 1);
  char digits[12];
  int n = 0;
  do digits[n++] = static_cast<char>('0' + fd % 10);
  while ((fd /= 10) > 0);
  size_t at = sizeof prefix - 1;
  while (n > 0) buf[at++] = digits[--n];
  buf[at] = '\0';
}
}  // namespace

bool EnterOwnMounts(const KeeperArgs& a, bool with_proc) {
  if (a.binds > kMaxBinds) {
    Say("cannot make the stage's own view: too many binds");
    return false;
  }
  if (syscall(SYS_unshare, CLONE_NEWNS) != 0) {
    Say("cannot make the stage's own mount namespace (unshare)");
    return false;
  }
  // A slave of the host's mounts: a volume mounted there later still shows here, and nothing
  // mounted here reaches the host or another stage.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    Say("cannot make the stage's mounts its own (MS_SLAVE)");
    return false;
  }
  int fds[kMaxBinds];
  for (size_t i = 0; i < a.binds; ++i) {
    fds[i] = open(a.bind_sources[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fds[i] < 0) {
      Say("cannot open a folder of the stage's view", a.bind_sources[i]);
      return false;
    }
  }
  for (size_t i = 0; i < a.binds; ++i) {
    char src[32];
    FdPath(fds[i], src);
    if (mount(src, a.bind_targets[i], nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      Say("cannot mount a folder of the stage's view", a.bind_targets[i]);
      return false;
    }
    close(fds[i]);
  }
  if (with_proc && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    Say("cannot mount the stage's own /proc");
    return false;
  }
  return true;
}

void ExecLeader(const KeeperArgs& a, pid_t parent, bool mounts_here) {
  // The leader dies with its parent (the keeper, or the init), so a keeper killed outright leaves
  // at most the leader's own escapes, which the worker's sweep (KillStrayChildren) and the cgroup
  // take. Under an init (a PID namespace of its own) the parent is that namespace's PID 1.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(a.out_w, 1);
  dup2(a.out_w, 2);
  if (mounts_here && a.own_mounts && !EnterOwnMounts(a, false)) _exit(126);
  // To the trial's user: raw system calls, which change this process alone (glibc's setresuid
  // would try to signal the worker's threads, whose list this copy of its memory still holds).
  if (a.gid >= 0 && (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setresgid, a.gid, a.gid, a.gid) != 0)) {
    Say("cannot take the trial's group");
    _exit(126);
  }
  if (a.uid >= 0 && syscall(SYS_setresuid, a.uid, a.uid, a.uid) != 0) {
    Say("cannot take the trial's user");
    _exit(126);
  }
  if (a.cwd && *a.cwd && chdir(a.cwd) != 0) _exit(126);
  execve(a.prog, a.argv, a.envp);
  if (errno == EACCES && a.uid >= 0) {
    Say("exec failed: permission denied: the trial's user cannot run the program (a folder on its path is closed to other users)");
    _exit(126);
  }
  Say("exec failed");
  _exit(127);
}

}  // namespace gauntlet::proc
