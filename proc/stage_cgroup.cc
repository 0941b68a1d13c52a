#include "proc/stage_cgroup.h"

#include "proc/cgroup_dirs.h"

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

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

// The cgroups of a worker that was SIGKILLed stay behind (empty: its keepers killed their stages).
// Removed once per process and hierarchy, the first time a cgroup is made; only those whose worker
// is gone. On v1 (no cgroup.kill) what is still inside is killed one by one.
void RemoveStale(const std::string& base, bool v2) {
  DIR* d = opendir(base.c_str());
  if (!d) return;
  const std::string prefix = "gauntlet-stage-";
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    pid_t owner = static_cast<pid_t>(atol(name.c_str() + prefix.size()));
    if (owner <= 0 || kill(owner, 0) == 0 || errno != ESRCH) continue;
    const std::string dir = base + "/" + name;
    if (v2) {
      WriteFile(dir + "/cgroup.kill", "1");
    } else {
      std::ifstream procs(dir + "/cgroup.procs");
      pid_t p;
      while (procs >> p) kill(p, SIGKILL);
    }
    rmdir(dir.c_str());
  }
  closedir(d);
}

// This process's own cgroup folders: v2's, and v1's memory and pids ("" where there is none), found
// once, when the stale folders of a killed worker are removed too. A stage's start reads them with
// no lock.
struct BaseDirs {
  std::string v2, memory, pids;
};
const BaseDirs& Bases() {
  static const BaseDirs b = [] {
    BaseDirs d{OwnCgroupDir(""), OwnCgroupDir("memory"), OwnCgroupDir("pids")};
    for (const std::string* dir : {&d.v2, &d.memory, &d.pids})
      if (!dir->empty()) RemoveStale(*dir, dir == &d.v2);
    return d;
  }();
  return b;
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

// Writes one limit file; true if the kernel took the value.
bool SetLimit(const std::string& dir, const char* file, int64_t value) {
  const std::string path = dir + "/" + file;
  if (access(path.c_str(), W_OK) != 0) return false;
  return WriteFile(path, std::to_string(value));
}

std::once_flag g_limits_warned;
}  // namespace

namespace {
// A fresh folder `name` under the v1 hierarchy folder `base`, or "".
std::string MakeV1(const std::string& base, const std::string& name) {
  if (base.empty()) return "";
  const std::string path = base + "/" + name;
  return mkdir(path.c_str(), 0755) == 0 ? path : "";
}
}  // namespace

std::unique_ptr<StageCgroup> StageCgroup::Create(int64_t memory_bytes, int64_t pids, bool v1) {
  if (g_mode != Containment::kAuto) return nullptr;
  const std::string name = "gauntlet-stage-" + std::to_string(getpid()) + "-" + std::to_string(g_seq++);
  std::unique_ptr<StageCgroup> cg(new StageCgroup);
  if (const std::string& base = Bases().v2; !base.empty()) {
    const std::string path = base + "/" + name;
    if (mkdir(path.c_str(), 0755) == 0) {
      // cgroup.kill is what makes the v2 cgroup worth having (Linux 5.14); without it, none.
      if (access((path + "/cgroup.kill").c_str(), W_OK) == 0) cg->v2_ = path;
      else rmdir(path.c_str());
    }
  }
  // Before any member joins: what the stage starts is born under its limits.
  if (!cg->v2_.empty()) {
    if (memory_bytes > 0 && SetLimit(cg->v2_, "memory.max", memory_bytes)) {
      cg->memory_limit_ = memory_bytes;
      (void)SetLimit(cg->v2_, "memory.swap.max", 0);  // best effort: absent without swap accounting
    }
    if (pids > 0 && SetLimit(cg->v2_, "pids.max", pids)) cg->pids_limit_ = pids;
  }
  // Where v2 holds no controller (a hybrid host) or there is no v2 at all, the v1 hierarchies do.
  if (v1 && memory_bytes > 0 && cg->memory_limit_ == 0 && !(cg->v1_memory_ = MakeV1(Bases().memory, name)).empty()) {
    if (SetLimit(cg->v1_memory_, "memory.limit_in_bytes", memory_bytes)) {
      cg->memory_limit_ = memory_bytes;
      // After limit_in_bytes, which memsw may not be below; absent without swap accounting.
      (void)SetLimit(cg->v1_memory_, "memory.memsw.limit_in_bytes", memory_bytes);
    }
  }
  if (v1 && pids > 0 && cg->pids_limit_ == 0 && !(cg->v1_pids_ = MakeV1(Bases().pids, name)).empty())
    if (SetLimit(cg->v1_pids_, "pids.max", pids)) cg->pids_limit_ = pids;
  if (cg->v2_.empty() && cg->v1_memory_.empty() && cg->v1_pids_.empty()) return nullptr;
  if (v1 && ((memory_bytes > 0 && cg->memory_limit_ == 0) || (pids > 0 && cg->pids_limit_ == 0)))
    std::call_once(g_limits_warned, [&] {
      spdlog::warn("stage cgroups here have no {} controller (enable it in the worker's cgroup v2 "
                   "cgroup.subtree_control, e.g. systemd Delegate=yes, or mount the v1 controller): stage memory "
                   "and pids limits are not enforced",
                   cg->memory_limit_ == 0 && memory_bytes > 0 ? "memory" : "pids");
    });
  return cg;
}

StageCgroup::~StageCgroup() { KillAndRemove(std::chrono::seconds(2)); }

std::vector<std::string> StageCgroup::ProcsFiles() const {
  std::vector<std::string> out;
  for (const std::string* d : {&v2_, &v1_memory_, &v1_pids_})
    if (!d->empty()) out.push_back(*d + "/cgroup.procs");
  return out;
}

std::string StageCgroup::LimitsHeldBy() const {
  if (memory_limit_ == 0 && pids_limit_ == 0) return "";
  return v1_memory_.empty() && v1_pids_.empty() ? "cgroup v2" : "cgroup v1";
}

void StageCgroup::ReadEvents() {
  if (removed_) return;
  // Absent where the controller is not enabled: then nothing counts. v1 has no memory.events; its
  // memory.oom_control counts the OOM kills (oom_kill, Linux 4.13) in the same "key value" form.
  memory_events_ = ParseCgroupEvents(ReadSmallFile(v1_memory_.empty() ? v2_ + "/memory.events" : v1_memory_ + "/memory.oom_control"));
  pids_events_ = ParseCgroupEvents(ReadSmallFile((v1_pids_.empty() ? v2_ : v1_pids_) + "/pids.events"));
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
  // Every member is in each folder (it joined them all); the v2 one is read where there is one.
  const std::string& dir = !v2_.empty() ? v2_ : !v1_memory_.empty() ? v1_memory_ : v1_pids_;
  std::ifstream f(dir + "/cgroup.procs");
  pid_t p;
  while (f >> p) out.push_back(p);
  return out;
}

void StageCgroup::Remove() {
  bool all = true;
  for (const std::string* d : {&v2_, &v1_memory_, &v1_pids_})
    if (!d->empty() && rmdir(d->c_str()) != 0 && errno != ENOENT) all = false;
  removed_ = all;
}

bool StageCgroup::KillAndRemove(std::chrono::milliseconds wait) {
  if (removed_) return true;
  const auto until = std::chrono::steady_clock::now() + wait;
  std::vector<pid_t> members = Members();
  bool empty = members.empty();
  if (!empty && !v2_.empty()) WriteFile(v2_ + "/cgroup.kill", "1");
  // cgroup.kill is asynchronous: members leave as the kernel gets to them. Polled briefly; there is
  // no wait-for-empty call short of inotify on cgroup.events. v1 has no kill: each member is sent
  // SIGKILL, round after round, since one may fork between the read and the kill.
  while (!empty && std::chrono::steady_clock::now() < until) {
    if (v2_.empty())
      for (pid_t p : members) kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    members = Members();
    empty = members.empty();
  }
  ReadEvents();  // the last look: the folders and their counters go with rmdir
  if (empty) Remove();
  return empty;
}

}  // namespace gauntlet::proc
