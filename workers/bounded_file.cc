#include "workers/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gauntlet::worker {
namespace {

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::variant<std::string, FileRefusal> ReadBoundedFile(const std::string& path, size_t max_bytes,
                                                       std::optional<uid_t> owner) {
  using Kind = FileRefusal::Kind;
  Fd f{open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) {
    const int e = errno;
    if (e == ENOENT) return FileRefusal{Kind::kMissing};
    if (e == ELOOP) return FileRefusal{Kind::kSymlink};
    return FileRefusal{Kind::kCannotOpen, e};
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0) return FileRefusal{Kind::kCannotRead, errno};
  if (!S_ISREG(st.st_mode)) return FileRefusal{Kind::kNotRegular, 0, st.st_mode};
  if (owner && st.st_uid != *owner) return FileRefusal{Kind::kOtherOwner, 0, 0, 0, st.st_uid};
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return FileRefusal{Kind::kTooLarge, 0, 0, st.st_size};
  // The file may grow after fstat (a writer still running): read on past what stat said, one byte
  // past the limit at most, and refuse what does not fit.
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (text.size() > max_bytes) break;
      text.resize(std::min(text.size() * 2, max_bytes + 1));
    }
    const ssize_t n = read(f.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FileRefusal{Kind::kCannotRead, errno};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) return FileRefusal{Kind::kGrew};
  text.resize(got);
  return text;
}

const char* FileKindName(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace gauntlet::worker
