#include "proc/stage_cgroup.h"

#include <dirent.h>
#include <spdlog/spdlog.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace gauntlet::proc {

namespace {
std::atomic<Containment> g_mode{Containment::kAuto};
std::atomic<uint64_t> g_seq{0};

// The folder of this process's own cgroup v2: the cgroup2 mount point (/proc/self/mountinfo) plus
// the "0::" line of /proc/self/cgroup. "" without a cgroup2 mount.
std::string OwnCgroupDir() {
  std::ifstream mi("/proc/self/mountinfo");
  std::string line, mount;
  while (std::getline(mi, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream f(line);
    std::string id, parent, dev, root, mp;
    f >> id >> parent >> dev >> root >> mp;
    if (root == "/") {
      mount = mp;
      break;
    }
  }
  if (mount.empty()) return "";
  std::ifstream cg("/proc/self/cgroup");
  while (std::getline(cg, line))
    if (line.rfind("0::", 0) == 0) return mount + (line.substr(3) == "/" ? "" : line.substr(3));
  return "";
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

// The cgroups of a worker that was SIGKILLed stay behind (empty: its keepers killed their stages).
// Removed once per process, the first time a cgroup is made; only those whose worker is gone.
void RemoveStale(const std::string& base) {
  DIR* d = opendir(base.c_str());
  if (!d) return;
  const std::string prefix = "gauntlet-stage-";
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    pid_t owner = static_cast<pid_t>(atol(name.c_str() + prefix.size()));
    if (owner <= 0 || kill(owner, 0) == 0 || errno != ESRCH) continue;
    WriteFile(base + "/" + name + "/cgroup.kill", "1");
    rmdir((base + "/" + name).c_str());
  }
  closedir(d);
}

const std::string& BaseDir() {
  static const std::string dir = [] {
    std::string d = OwnCgroupDir();
    if (!d.empty()) RemoveStale(d);
    return d;
  }();
  return dir;
}
}  // namespace

void SetContainment(Containment mode) { g_mode = mode; }
Containment GetContainment() { return g_mode; }

bool StageCgroup::Available() {
  static const bool ok = [] {
    auto probe = Create();
    return probe != nullptr;
  }();
  return ok && g_mode == Containment::kAuto;
}

CgroupEvents ParseCgroupEvents(std::string_view text) {
  CgroupEvents e;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, sp), num = line.substr(sp + 1);
    int64_t v = 0;
    bool ok = !num.empty();
    for (char c : num) {
      if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10) {
        ok = false;
        break;
      }
      v = v * 10 + (c - '0');
    }
    if (!ok) continue;
    if (key == "max") e.max = v;
    else if (key == "oom") e.oom = v;
    else if (key == "oom_kill") e.oom_kill = v;
  }
  return e;
}

DefaultLimits DefaultStageLimits() {
  static const DefaultLimits d = [] {
    DefaultLimits l;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) l.memory_bytes = static_cast<int64_t>(pages) * page / 10 * 9;
    l.pids = 16384;
    return l;
  }();
  return d;
}

namespace {
std::string ReadSmall(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Writes one limit file; true if the kernel took the value.
bool SetLimit(const std::string& dir, const char* file, int64_t value) {
  const std::string path = dir + "/" + file;
  if (access(path.c_str(), W_OK) != 0) return false;
  return WriteFile(path, std::to_string(value));
}

std::once_flag g_limits_warned;
}  // namespace

std::unique_ptr<StageCgroup> StageCgroup::Create(int64_t memory_bytes, int64_t pids) {
  if (g_mode != Containment::kAuto || BaseDir().empty()) return nullptr;
  std::string path = BaseDir() + "/gauntlet-stage-" + std::to_string(getpid()) + "-" + std::to_string(g_seq++);
  if (mkdir(path.c_str(), 0755) != 0) return nullptr;
  std::unique_ptr<StageCgroup> cg(new StageCgroup(path));
  // cgroup.kill is what makes the cgroup worth having (Linux 5.14); without it, none.
  if (access((path + "/cgroup.kill").c_str(), W_OK) != 0) return nullptr;  // the destructor removes it
  // Before any member joins: what the stage starts is born under its limits.
  if (memory_bytes > 0 && SetLimit(path, "memory.max", memory_bytes)) {
    cg->memory_limit_ = memory_bytes;
    (void)SetLimit(path, "memory.swap.max", 0);  // best effort: absent without swap accounting
  }
  if (pids > 0 && SetLimit(path, "pids.max", pids)) cg->pids_limit_ = pids;
  if ((memory_bytes > 0 && cg->memory_limit_ == 0) || (pids > 0 && cg->pids_limit_ == 0))
    std::call_once(g_limits_warned, [&] {
      spdlog::warn("stage cgroups here have no {} controller (enable it in {}/cgroup.subtree_control, e.g. "
                   "systemd Delegate=yes): stage memory and pids limits are not enforced",
                   cg->memory_limit_ == 0 && memory_bytes > 0 ? "memory" : "pids", BaseDir());
    });
  return cg;
}

StageCgroup::~StageCgroup() { KillAndRemove(std::chrono::seconds(2)); }

void StageCgroup::ReadEvents() {
  if (removed_) return;
  // Absent where the controller is not enabled: then nothing counts.
  memory_events_ = ParseCgroupEvents(ReadSmall(path_ + "/memory.events"));
  pids_events_ = ParseCgroupEvents(ReadSmall(path_ + "/pids.events"));
}

CgroupEvents StageCgroup::memory_events() {
  ReadEvents();
  return memory_events_;
}

CgroupEvents StageCgroup::pids_events() {
  ReadEvents();
  return pids_events_;
}

std::vector<pid_t> StageCgroup::Members() const {
  std::vector<pid_t> out;
  std::ifstream f(path_ + "/cgroup.procs");
  pid_t p;
  while (f >> p) out.push_back(p);
  return out;
}

bool StageCgroup::KillAndRemove(std::chrono::milliseconds wait) {
  if (removed_) return true;
  const auto until = std::chrono::steady_clock::now() + wait;
  bool empty = Members().empty();
  if (!empty) WriteFile(path_ + "/cgroup.kill", "1");
  // cgroup.kill is asynchronous: members leave as the kernel gets to them. Polled briefly; there is
  // no wait-for-empty call short of inotify on cgroup.events.
  while (!empty && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    empty = Members().empty();
  }
  ReadEvents();  // the last look: the folder and its counters go with rmdir
  if (empty && rmdir(path_.c_str()) == 0) removed_ = true;
  return empty;
}

}  // namespace gauntlet::proc
