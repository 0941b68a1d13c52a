// Minimal NVML client via dlopen. Only the handful of entry points preflight reads; their
// signatures are NVML's stable C ABI (nvml.h), declared here so no header or library is needed
// at build time.
#include "nvml_dl.hpp"

#include <dlfcn.h>

namespace gauntlet::kernels::nvml {
namespace {
using Ret = int;          // nvmlReturn_t; 0 = NVML_SUCCESS
using Dev = void*;        // nvmlDevice_t
constexpr int kUncorrected = 1, kCorrected = 0;         // nvmlMemoryErrorType_t
constexpr int kVolatile = 0, kAggregate = 1;            // nvmlEccCounterType_t
constexpr int kCauseSbe = 0, kCauseDbe = 1;             // nvmlPageRetirementCause_t

template <typename F>
F sym(void* h, const char* n) {
  return reinterpret_cast<F>(dlsym(h, n));
}
}  // namespace

Health query(const std::string& uuid) {
  Health h;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    h.error = std::string("cannot load libnvidia-ml.so.1: ") + (e ? e : "not found");
    return h;
  }
  auto init = sym<Ret (*)()>(lib, "nvmlInit_v2");
  auto shutdown = sym<Ret (*)()>(lib, "nvmlShutdown");
  auto by_uuid = sym<Ret (*)(const char*, Dev*)>(lib, "nvmlDeviceGetHandleByUUID");
  auto err_str = sym<const char* (*)(Ret)>(lib, "nvmlErrorString");
  if (!init || !shutdown || !by_uuid) {
    h.error = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetHandleByUUID";
    dlclose(lib);
    return h;
  }
  auto why = [&](Ret r) { return err_str ? std::string(err_str(r)) : "NVML error " + std::to_string(r); };
  if (Ret r = init(); r != 0) {
    h.error = "nvmlInit: " + why(r);
    dlclose(lib);
    return h;
  }
  Dev dev = nullptr;
  if (Ret r = by_uuid(uuid.c_str(), &dev); r != 0) {
    h.error = "nvmlDeviceGetHandleByUUID(" + uuid + "): " + why(r);
    shutdown();
    dlclose(lib);
    return h;
  }
  h.available = true;
  if (auto f = sym<Ret (*)(char*, unsigned)>(lib, "nvmlSystemGetDriverVersion")) {
    char buf[96] = {};
    if (f(buf, sizeof buf) == 0) h.driver = buf;
  }
  if (auto f = sym<Ret (*)(Dev, int*, int*)>(lib, "nvmlDeviceGetEccMode")) {
    int cur = 0, pend = 0;
    if (f(dev, &cur, &pend) == 0) h.ecc_enabled = cur != 0;
  }
  if (auto f = sym<Ret (*)(Dev, int, int, unsigned long long*)>(lib, "nvmlDeviceGetTotalEccErrors")) {
    unsigned long long c = 0;
    if (f(dev, kUncorrected, kVolatile, &c) == 0) h.ecc_uncorrected_volatile = static_cast<long long>(c);
    if (f(dev, kUncorrected, kAggregate, &c) == 0) h.ecc_uncorrected_aggregate = static_cast<long long>(c);
    if (f(dev, kCorrected, kVolatile, &c) == 0) h.ecc_corrected_volatile = static_cast<long long>(c);
  }
  if (auto f = sym<Ret (*)(Dev, int, unsigned*, unsigned long long*)>(lib, "nvmlDeviceGetRetiredPages")) {
    // Count only: with count 0 and no array NVML answers the count (success when it is 0,
    // NVML_ERROR_INSUFFICIENT_SIZE = 7 with the count filled in otherwise).
    unsigned n = 0;
    if (Ret r = f(dev, kCauseSbe, &n, nullptr); r == 0 || r == 7) h.retired_pages_sbe = n;
    n = 0;
    if (Ret r = f(dev, kCauseDbe, &n, nullptr); r == 0 || r == 7) h.retired_pages_dbe = n;
  }
  if (auto f = sym<Ret (*)(Dev, int*)>(lib, "nvmlDeviceGetRetiredPagesPendingStatus")) {
    int p = 0;
    if (f(dev, &p) == 0) h.retired_pages_pending = p != 0;
  }
  // Hopper and later replace page retirement with row remapping.
  if (auto f = sym<Ret (*)(Dev, unsigned*, unsigned*, unsigned*, unsigned*)>(lib, "nvmlDeviceGetRemappedRows")) {
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    if (f(dev, &corr, &unc, &pending, &failed) == 0) {
      h.remapped_rows_correctable = corr;
      h.remapped_rows_uncorrectable = unc;
      h.remap_pending = pending != 0;
      h.remap_failure = failed != 0;
    }
  }
  shutdown();
  dlclose(lib);
  return h;
}

}  // namespace gauntlet::kernels::nvml
