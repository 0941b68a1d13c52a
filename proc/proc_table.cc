#include "proc/proc_table.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace gauntlet::proc {

namespace {

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// "/proc/" + pid + "/stat" into buf (at least 32 bytes).
void StatPath(pid_t pid, char* buf) {
  const char prefix[] = "/proc/";
  size_t n = 0;
  for (const char* p = prefix; *p; ++p) buf[n++] = *p;
  char digits[16];
  size_t d = 0;
  unsigned v = static_cast<unsigned>(pid);
  do {
    digits[d++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (d) buf[n++] = digits[--d];
  const char suffix[] = "/stat";
  for (const char* p = suffix; *p; ++p) buf[n++] = *p;
  buf[n] = 0;
}

// Field 4 of /proc/PID/stat, after the command's closing parenthesis (the command may hold ')').
pid_t ReadPpid(pid_t pid) {
  char path[40];
  StatPath(pid, path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  ssize_t close_paren = -1;
  for (ssize_t i = 0; i < n; ++i)
    if (buf[i] == ')') close_paren = i;
  // ") S PPID ": skip the state letter and its spaces.
  ssize_t i = close_paren + 1;
  if (close_paren < 0) return -1;
  while (i < n && buf[i] == ' ') ++i;
  while (i < n && buf[i] != ' ') ++i;
  while (i < n && buf[i] == ' ') ++i;
  pid_t ppid = 0;
  bool any = false;
  for (; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i, any = true) ppid = ppid * 10 + (buf[i] - '0');
  return any ? ppid : -1;
}

bool ParsePid(const char* s, pid_t* out) {
  pid_t v = 0;
  if (!*s) return false;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
    v = v * 10 + (*s - '0');
  }
  *out = v;
  return true;
}

}  // namespace

pid_t ParentOf(pid_t pid) { return ReadPpid(pid); }

size_t ListDescendants(pid_t root, pid_t* out, size_t cap, pid_t* spid, pid_t* sppid, size_t scap) {
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  size_t entries = 0;
  alignas(8) char buf[8192];
  while (true) {
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
      off += d->d_reclen;
      pid_t pid;
      if (entries < scap && ParsePid(d->d_name, &pid)) {
        pid_t ppid = ReadPpid(pid);
        if (ppid >= 0) {
          spid[entries] = pid;
          sppid[entries] = ppid;
          ++entries;
        }
      }
    }
  }
  close(dir);
  // Breadth-first from root over the table: out[] is the queue.
  size_t found = 0;
  for (size_t i = 0; i < entries && found < cap; ++i)
    if (sppid[i] == root) out[found++] = spid[i];
  for (size_t head = 0; head < found; ++head)
    for (size_t i = 0; i < entries && found < cap; ++i)
      if (sppid[i] == out[head] && spid[i] != root) out[found++] = spid[i];
  return found;
}

}  // namespace gauntlet::proc
