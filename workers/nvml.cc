#include "workers/nvml.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace gauntlet::worker {

namespace {
// The few NVML entry points used, declared by hand (nvml.h is not needed to build).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
}  // namespace

struct Nvml::Fns {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  nvmlReturn_t (*count)(unsigned*);
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*cc)(nvmlDevice_t, int*, int*);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*driver)(char*, unsigned);
  nvmlReturn_t (*cuda)(int*);
  nvmlReturn_t (*procs)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*);
};

std::optional<Nvml> Nvml::Open(std::string* why) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    if (why) *why = "no NVML (libnvidia-ml.so.1 not found): a CPU-only node";
    return std::nullopt;
  }
  auto* f = new Fns{};
  auto sym = [&](auto& fn, const char* a, const char* b = nullptr) {
    void* p = dlsym(lib, a);
    if (!p && b) p = dlsym(lib, b);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    return p != nullptr;
  };
  bool ok = sym(f->init, "nvmlInit_v2") && sym(f->shutdown, "nvmlShutdown") &&
            sym(f->count, "nvmlDeviceGetCount_v2") && sym(f->by_index, "nvmlDeviceGetHandleByIndex_v2") &&
            sym(f->name, "nvmlDeviceGetName") && sym(f->uuid, "nvmlDeviceGetUUID") &&
            sym(f->cc, "nvmlDeviceGetCudaComputeCapability") && sym(f->memory, "nvmlDeviceGetMemoryInfo") &&
            sym(f->driver, "nvmlSystemGetDriverVersion") && sym(f->cuda, "nvmlSystemGetCudaDriverVersion_v2",
                                                                  "nvmlSystemGetCudaDriverVersion");
  sym(f->procs, "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses");
  if (!ok || f->init() != 0) {
    if (why) *why = "NVML present but unusable (missing symbols or nvmlInit failed)";
    delete f;
    dlclose(lib);
    return std::nullopt;
  }
  Nvml n;
  n.lib_ = lib;
  n.fns_ = f;
  return n;
}

Nvml::Nvml(Nvml&& o) noexcept : lib_(o.lib_), fns_(o.fns_) {
  o.lib_ = nullptr;
  o.fns_ = nullptr;
}

Nvml::~Nvml() {
  if (fns_) {
    fns_->shutdown();
    delete fns_;
  }
  if (lib_) dlclose(lib_);
}

std::vector<Gpu> Nvml::Gpus() const {
  std::vector<Gpu> out;
  unsigned n = 0;
  if (fns_->count(&n) != 0) return out;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t d;
    if (fns_->by_index(i, &d) != 0) continue;
    Gpu g;
    g.index = static_cast<int>(i);
    char buf[256] = {0};
    if (fns_->name(d, buf, sizeof buf) == 0) g.name = buf;
    memset(buf, 0, sizeof buf);
    if (fns_->uuid(d, buf, sizeof buf) == 0) g.uuid = buf;
    fns_->cc(d, &g.cc_major, &g.cc_minor);
    nvmlMemory_t m{};
    if (fns_->memory(d, &m) == 0) g.memory_mb = static_cast<int64_t>(m.total >> 20);
    out.push_back(g);
  }
  return out;
}

std::string Nvml::DriverVersion() const {
  char buf[96] = {0};
  return fns_->driver(buf, sizeof buf) == 0 ? buf : "";
}

std::string Nvml::CudaVersion() const {
  int v = 0;
  if (fns_->cuda(&v) != 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::optional<NvmlGpuState> Nvml::State(int index) const {
  nvmlDevice_t d;
  if (fns_->by_index(static_cast<unsigned>(index), &d) != 0) return std::nullopt;
  NvmlGpuState s;
  s.index = index;
  nvmlMemory_t m{};
  if (fns_->memory(d, &m) == 0) s.used_mb = m.used >> 20;
  if (fns_->procs) {
    unsigned count = 64;
    std::vector<nvmlProcessInfo_t> infos(count);
    if (fns_->procs(d, &count, infos.data()) == 0)
      for (unsigned i = 0; i < count; ++i) s.pids.push_back(infos[i].pid);
  }
  return s;
}

Inventory DiscoverInventory(std::string* note) {
  Inventory inv;
  auto nvml = Nvml::Open(note);
  if (!nvml) return inv;
  inv.gpus = nvml->Gpus();
  // A worker given part of a host (a Slurm job, a container) sees its GPUs in CUDA_VISIBLE_DEVICES,
  // by index or UUID: offer only those, or trials would land on GPUs another job owns.
  if (const char* vis = getenv("CUDA_VISIBLE_DEVICES"); vis && *vis) {
    std::vector<Gpu> keep;
    std::string list = vis;
    size_t i = 0;
    while (i <= list.size()) {
      size_t j = list.find(',', i);
      if (j == std::string::npos) j = list.size();
      std::string id = list.substr(i, j - i);
      for (auto& g : inv.gpus)
        if (id == std::to_string(g.index) || (!id.empty() && g.uuid.rfind(id, 0) == 0)) keep.push_back(g);
      i = j + 1;
    }
    inv.gpus = keep;
  }
  inv.driver = nvml->DriverVersion();
  inv.cuda = nvml->CudaVersion();
  if (note) *note = "NVML: " + std::to_string(inv.gpus.size()) + " GPU(s), driver " + inv.driver;
  return inv;
}

}  // namespace gauntlet::worker
