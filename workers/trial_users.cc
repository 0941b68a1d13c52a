#include "workers/trial_users.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>

#include "proc/process.h"

namespace gauntlet::worker {

namespace {

// "61000-61999" -> (61000, 1000); false for anything else, or ids below 1000 (system accounts) or
// past 2^31 (a uid_t the kernel treats as invalid when cast).
bool ParseRange(const std::string& s, uid_t* first, uid_t* count) {
  const size_t dash = s.find('-');
  if (dash == std::string::npos) return false;
  uint64_t a = 0, b = 0;
  auto [pa, ea] = std::from_chars(s.data(), s.data() + dash, a);
  auto [pb, eb] = std::from_chars(s.data() + dash + 1, s.data() + s.size(), b);
  if (ea != std::errc() || eb != std::errc() || pa != s.data() + dash || pb != s.data() + s.size()) return false;
  if (a < 1000 || b < a || b >= (1ull << 31)) return false;
  *first = static_cast<uid_t>(a);
  *count = static_cast<uid_t>(b - a + 1);
  return true;
}

}  // namespace

bool TrialUsers::Can(uid_t uid, const std::string& path, int mode) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    // Raw calls: this child of a threaded worker changes its own credentials only.
    if (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setresgid, uid, uid, uid) != 0 ||
        syscall(SYS_setresuid, uid, uid, uid) != 0)
      _exit(2);
    _exit(access(path.c_str(), mode) == 0 ? 0 : 1);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

std::unique_ptr<TrialUsers> TrialUsers::Configure(const std::string& mode, const std::string& range,
                                                  const std::vector<std::string>& programs, const std::string& path,
                                                  const std::string& workdir, std::string* error) {
  auto made = std::make_unique<TrialUsers>();
  TrialUsers& t = *made;
  if (mode != "auto" && mode != "on" && mode != "off") {
    *error = "--trial-users is auto, on or off (not '" + mode + "')";
    return nullptr;
  }
  if (!ParseRange(range, &t.first_, &t.count_)) {
    *error = "--trial-uids is FIRST-LAST, ids from 1000 up (not '" + range + "')";
    return nullptr;
  }
  const std::string ids = "uids " + std::to_string(t.first_) + "-" + std::to_string(t.first_ + t.count_ - 1);
  if (mode == "off") {
    t.description_ = "off: --trial-users off (stages run as the worker's own user)";
    return made;
  }
  if (geteuid() != 0) {
    if (mode == "on") {
      *error = "--trial-users on needs the worker to run as root (it starts each trial as a user of its own)";
      return nullptr;
    }
    t.description_ = "off: the worker is not root, so its stages run as its own user";
    return made;
  }
  if (!Can(t.first_, workdir, X_OK)) {
    const std::string why = "a trial's user cannot reach the workdir " + workdir + " (a folder above it is closed to other users)";
    if (mode == "on") {
      *error = "--trial-users on: " + why;
      return nullptr;
    }
    t.description_ = "off: " + why;
    return made;
  }
  if (mode == "auto")
    for (const std::string& name : programs) {
      const std::string program = proc::FindProgram(name, path);
      if (program.find('/') == std::string::npos) continue;  // not on this node: nothing to keep working
      if (!Can(t.first_, program, X_OK)) {
        t.description_ = "off: a trial's user could not run " + program +
                         " (a folder on its path is closed to other users); --trial-users on forces them";
        return made;
      }
    }
  t.enabled_ = true;
  t.description_ = "trial users (" + ids + ")";
  return made;
}

std::optional<TrialUser> TrialUsers::Acquire() {
  if (!enabled_) return std::nullopt;
  std::lock_guard lock(mu_);
  for (uid_t i = 0; i < count_; ++i) {
    const uid_t id = first_ + static_cast<uid_t>((next_ + i) % count_);
    if (held_.count(id)) continue;
    held_.insert(id);
    next_ = (next_ + i + 1) % count_;
    return TrialUser{id, static_cast<gid_t>(id)};
  }
  return std::nullopt;
}

void TrialUsers::Release(const TrialUser& u) {
  std::lock_guard lock(mu_);
  held_.erase(u.uid);
}

}  // namespace gauntlet::worker
