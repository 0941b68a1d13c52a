#include "proc/workdir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace gauntlet::proc {

Result<std::unique_ptr<WorkdirLock>> WorkdirLock::Acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = dir + "/.gauntlet-worker.lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("cannot open " + path + ": " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    const std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown";
    return Status::Conflict("another worker (pid " + pid + ") uses --workdir " + dir +
                            "; give each worker a folder of its own");
  }
  const std::string me = std::to_string(getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, me.data(), me.size(), 0) < 0) {
    // The pid is only for the message a second worker prints; the lock itself holds.
  }
  return std::unique_ptr<WorkdirLock>(new WorkdirLock(fd));
}

WorkdirLock::~WorkdirLock() { close(fd_); }

}  // namespace gauntlet::proc
