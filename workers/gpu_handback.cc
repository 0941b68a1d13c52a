#include "workers/gpu_handback.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <thread>

#include "workers/nvml.h"

namespace gauntlet::worker {

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

class NvmlProbe final : public GpuProbe {
 public:
  explicit NvmlProbe(Nvml n) : nvml_(std::move(n)) {}
  std::optional<std::vector<unsigned>> Pids(int index) const override {
    auto s = nvml_.State(index);
    if (!s) return std::nullopt;
    return s->pids;
  }

 private:
  Nvml nvml_;
};

std::string Describe(unsigned pid) {
  std::string comm = ReadAll("/proc/" + std::to_string(pid) + "/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return std::to_string(pid) + (comm.empty() ? " (not visible here)" : " (" + comm + ")");
}

}  // namespace

std::unique_ptr<GpuProbe> OpenNvmlProbe() {
  auto n = Nvml::Open(nullptr);
  if (!n) return nullptr;
  return std::make_unique<NvmlProbe>(std::move(*n));
}

bool IsTrialProcess(pid_t pid, const std::string& workdir) {
  const std::string base = "/proc/" + std::to_string(pid);
  if (pid == getpid()) return false;
  // The stage's cgroup (proc/stage_cgroup.h) survives all a process can do to its parentage and
  // environment.
  if (ReadAll(base + "/cgroup").find("/gauntlet-stage-") != std::string::npos) return true;
  const std::string env = ReadAll(base + "/environ");
  const std::string needle = "GAUNTLET_WORKDIR=" + workdir + "/trial-";
  size_t at = env.find(needle);
  return at != std::string::npos && (at == 0 || env[at - 1] == '\0');
}

std::vector<HeldBackGpu> HandBackGpus(const GpuProbe& probe, const std::vector<int>& gpus, const std::string& workdir,
                                      std::chrono::milliseconds wait, WorkerClock& clock) {
  const auto until = clock.Now() + wait;
  std::vector<HeldBackGpu> busy;
  while (true) {
    busy.clear();
    for (int g : gpus) {
      auto pids = probe.Pids(g);
      if (!pids || pids->empty()) continue;  // free, or NVML cannot say (nothing to act on)
      std::string who;
      for (unsigned p : *pids) {
        if (IsTrialProcess(static_cast<pid_t>(p), workdir)) kill(static_cast<pid_t>(p), SIGKILL);
        who += (who.empty() ? "" : ", ") + Describe(p);
      }
      busy.push_back({g, "GPU " + std::to_string(g) + " still has processes after its trial: " + who, *pids});
    }
    if (busy.empty() || clock.Now() >= until) return busy;
    // The driver releases a killed process's memory some time after it dies: polled, bounded.
    clock.SleepFor(std::chrono::milliseconds(100));
  }
}

}  // namespace gauntlet::worker
