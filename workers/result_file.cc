#include "workers/result_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace gauntlet::worker {

namespace {
constexpr const char* kName = "GAUNTLET_RESULT_FILE";

Status Bad(const std::string& why) { return Status::Invalid(std::string(kName) + " " + why, "result_file"); }

// realpath(3) of `p`, or "" when it cannot be resolved.
std::string Real(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// Whether the folder holding `path` is `workdir` or inside it, links in the folders resolved.
bool InsideWorkdir(const std::string& path, const std::string& workdir) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = Real(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
  const std::string root = Real(workdir);
  if (dir.empty() || root.empty()) return false;
  return dir == root || (dir.size() > root.size() && dir.compare(0, root.size(), root) == 0 && dir[root.size()] == '/');
}

const char* KindOf(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};
}  // namespace

Result<std::optional<std::string>> ReadResultFile(const std::string& path, const std::string& workdir) {
  Fd f{open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    if (errno == ELOOP) return Bad("is a symbolic link; it must be a regular file inside the trial's workdir");
    return Bad("cannot be opened: " + std::string(strerror(errno)));
  }
  struct stat st{};
  if (fstat(f.fd, &st) != 0) return Bad("cannot be read: " + std::string(strerror(errno)));
  if (!S_ISREG(st.st_mode)) return Bad(std::string("is ") + KindOf(st.st_mode) + "; it must be a regular file");
  if (static_cast<uint64_t>(st.st_size) > kResultFileMaxBytes)
    return Bad("is " + std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(kResultFileMaxBytes) +
               " bytes (1 MiB)");
  if (!InsideWorkdir(path, workdir)) return Bad("is not inside the trial's workdir " + workdir);
  // The file may grow after fstat (the stage's grandchild still writing): read one byte past the
  // limit at most and refuse what does not fit.
  std::string text;
  text.resize(kResultFileMaxBytes + 1);
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(f.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Bad("cannot be read: " + std::string(strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kResultFileMaxBytes) return Bad("grew past the limit of " + std::to_string(kResultFileMaxBytes) + " bytes (1 MiB)");
  text.resize(got);
  return std::optional<std::string>(std::move(text));
}

}  // namespace gauntlet::worker
