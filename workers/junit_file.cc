#include "workers/junit_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "classifier/junit_report.h"

namespace gauntlet::worker {

Result<classifier::TestReport> ReadJUnitFile(const std::string& path) {
  const std::string what = "junit file " + path + ": ";
  // O_NOFOLLOW: a test that leaves a symlink there cannot make the worker read another file;
  // O_NONBLOCK: a FIFO left there cannot hang the open (it is then refused as not a regular file).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return Status::Invalid(what + "missing (the test runner wrote no report)");
    if (e == ELOOP) return Status::Invalid(what + "is a symlink; not followed");
    return Status::Invalid(what + "cannot be opened: " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Invalid(what + "not a regular file");
  }
  if (static_cast<size_t>(st.st_size) > kMaxJUnitBytes) {
    ::close(fd);
    return Status::Invalid(what + "larger than " + std::to_string(kMaxJUnitBytes >> 20) + " MiB (" +
                           std::to_string(st.st_size) + " bytes); not read");
  }
  std::string data;
  data.resize(static_cast<size_t>(st.st_size) + 1);
  size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return Status::Invalid(what + "cannot be read: " + std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  // The file grew after fstat: the bound holds on what was read, not on what stat said.
  if (got > kMaxJUnitBytes) return Status::Invalid(what + "larger than " + std::to_string(kMaxJUnitBytes >> 20) + " MiB; not read");
  data.resize(got);
  if (data.empty()) return Status::Invalid(what + "empty");
  auto r = classifier::ParseJUnitXml(data);
  if (!r.ok()) return Status::Invalid(what + r.status().message());
  return r;
}

}  // namespace gauntlet::worker
