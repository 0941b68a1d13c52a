#include "proc/stage_cgroup.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

std::unique_ptr<StageCgroup> StageCgroup::Create() {
  if (g_mode != Containment::kAuto || BaseDir().empty()) return nullptr;
  std::string path = BaseDir() + "/gauntlet-stage-" + std::to_string(getpid()) + "-" + std::to_string(g_seq++);
  if (mkdir(path.c_str(), 0755) != 0) return nullptr;
  std::unique_ptr<StageCgroup> cg(new StageCgroup(path));
  // cgroup.kill is what makes the cgroup worth having (Linux 5.14); without it, none.
  if (access((path + "/cgroup.kill").c_str(), W_OK) != 0) return nullptr;  // the destructor removes it
  return cg;
}

StageCgroup::~StageCgroup() { KillAndRemove(std::chrono::seconds(2)); }

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
  if (empty && rmdir(path_.c_str()) == 0) removed_ = true;
  return empty;
}

}  // namespace gauntlet::proc
