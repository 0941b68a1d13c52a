#include "classifier/builtin_rules.h"

#include <array>
#include <cctype>
#include <stdexcept>

#include "classifier/normalize.h"
#include "classifier/rule_words.h"
#include "classifier/refusals.h"
#include "classifier/report_grammar.h"

namespace gauntlet::classifier {
using namespace rule_words;


void BuiltinRules::Add(std::string name, std::vector<std::string> needles,
                       std::function<std::optional<RuleHit>(const LineContext&)> predicate, Basis basis) {
  Rule r{std::move(name), {}, std::move(predicate), basis};
  for (auto& n : needles) {
    r.needle_ids.push_back(static_cast<uint32_t>(needles_.size()));
    needle_rule_.push_back(static_cast<uint32_t>(rules_.size()));
    needles_.push_back(std::move(n));
  }
  rules_.push_back(std::move(r));
  if (rules_.size() > 64) throw std::logic_error("BuiltinRules: more than 64 rules; widen the candidate mask");
}

std::optional<RuleHit> BuiltinRules::Match(const std::vector<uint32_t>& hit_ids, const LineContext& ctx) const {
  // Candidate rules as a bitmask (there are fewer than 64), then run them in priority order.
  static_assert(sizeof(uint64_t) * 8 >= 64);
  uint64_t candidates = 0;
  for (uint32_t id : hit_ids)
    if (id < needle_rule_.size()) candidates |= uint64_t{1} << needle_rule_[id];
  while (candidates) {
    const int i = __builtin_ctzll(candidates);
    candidates &= candidates - 1;
    const Rule& rule = rules_[static_cast<size_t>(i)];
    if (auto h = rule.predicate(ctx)) {
      h->basis = rule.basis;
      return h;
    }
  }
  return std::nullopt;
}

const BuiltinRules& DefaultBuiltinRules() {
  static const BuiltinRules rules;
  return rules;
}

// Rules in priority order: the first one that holds decides what the line means. The groups are
// added in that order too.
BuiltinRules::BuiltinRules() {
  AddCompileRules();
  AddMemoryRules();
  AddRefusalAndNodeRules();
  AddMissingToolRule();
  AddStatusRule();
  AddCheckAndCrashRules();
}

// A consequence (a watchdog, a wrapper's "see root cause above") before anything it reports, then
// the toolchain with no code for this GPU.
void BuiltinRules::AddCompileRules() {
  // --- consequences first, so a watchdog "what():" line is not read as the crash itself --------
  Add("nccl_watchdog",
      {"watchdog caught collective operation timeout", "watchdog thread terminated", "process group watchdog",
       "heartbeat monitor timed out", "collective operation timeout"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        // ProcessGroupNCCL's watchdog reports what ended it: "Watchdog caught collective operation
        // timeout: ... ran for 600000 milliseconds before timing out" is a deadline; "watchdog
        // thread terminated with exception: CUDA error: an illegal memory access was encountered"
        // carries another error, which the rules after this one judge from its own words.
        if (!Has(c.lower, "timeout") && !Has(c.lower, "timed out") && !Has(c.lower, "timing out")) return std::nullopt;
        return Hit("nccl_watchdog", Verdict::kTimeout, "timeout:nccl_watchdog", Tier::kSecondary);
      });
  Add("wrapper",
      {"see root cause above", "engine core initialization failed", "workerproc initialization failed",
       "childfailederror", "scheduler is dead", "died unexpectedly", "child process unexpectedly failed",
       "received sigquit from a child", "connection reset by peer", "broken pipe", "communicator was aborted",
       "exception in worker", "worker process died", "enginedeaderror", "engine loop has died",
       "exception in a different rank", "processraisedexception"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        return Hit("wrapper", Verdict::kCrashed, "crashed:wrapper:" + Norm(c, 80), Tier::kSecondary, false);
      });

  // --- the backend has no code for this GPU -----------------------------------------------------
  // ptxas's own error grammar ("ptxas fatal", "ptxas x.ptx, line 9; error : ..."), not every ptxas line:
  // "ptxas info : Used 128 registers" is how a healthy verbose build talks.
  Add("ptxas",
      {"ptxas fatal", "ptxas error", "; error", "nvcc fatal", "for option 'gpu-name'", "unsupported gpu architecture",
       ".target", "cannot be compiled for architecture"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (std::string v = QuotedAfter(c.raw, c.lower, "value"); !v.empty() && Has(c.lower, "gpu-name"))
          return Hit("ptxas", Verdict::kUnsupported, "unsupported:ptxas_arch:" + v, Tier::kSpecific, true, true);
        if (Has(c.lower, "unsupported gpu architecture")) {
          std::string v = QuotedAfter(c.raw, c.lower, "architecture");
          return Hit("ptxas", Verdict::kUnsupported, "unsupported:nvcc_arch:" + (v.empty() ? std::string("unknown") : v),
                     Tier::kSpecific, true, true);
        }
        if (Has(c.lower, "unsupported .version") || Has(c.lower, "unsupported .target"))
          return Hit("ptxas", Verdict::kUnsupported, "unsupported:ptxas_version", Tier::kSpecific, true, true);
        // "error : Instruction 'x' not supported on .target 'sm_120'", "requires .target sm_80 or higher".
        if (std::optional<std::string> detail = PtxasTargetError(c.raw, c.lower))
          return Hit("ptxas", Verdict::kUnsupported, "unsupported:ptxas_feature:" + *detail, Tier::kSpecific, true, true);
        if (Has(c.lower, "ptxas fatal") || Has(c.lower, "nvcc fatal"))
          return Hit("ptxas", Verdict::kCrashed, "crashed:ptxas:" + Norm(c, 80));
        return std::nullopt;
      });
  // HIP's equivalent on ROCm (hip_runtime_api.h hipErrorNoBinaryForGpu: "Unable to find code object
  // for all current devices").
  Add("no_binary_for_gpu", {"cuda_error_no_binary_for_gpu", "no binary for gpu", "hiperrornobinaryforgpu",
                            "unable to find code object for all current devices"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && MentionsFallback(c.lower)) return std::nullopt;
        return Hit("no_binary_for_gpu", Verdict::kUnsupported, "unsupported:no_binary_for_gpu", Tier::kSpecific, true, true);
      }, Basis::kStatus);
  Add("no_kernel_image",
      {"no kernel image is available", "cudaerrornokernelimagefordevice", "no_kernel_image_for_device"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && MentionsFallback(c.lower)) return std::nullopt;
        return Hit("no_kernel_image", Verdict::kUnsupported, "unsupported:no_kernel_image", Tier::kSpecific, true, true);
      }, Basis::kStatus);
  Add("invalid_kernel_image",
      {"device kernel image is invalid", "cuda_error_invalid_image", "invalid device function",
       "cudaerrorinvaliddevicefunction"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && MentionsFallback(c.lower)) return std::nullopt;
        if (Has(c.lower, "invalid device function") || Has(c.lower, "cudaerrorinvaliddevicefunction"))
          return Hit("invalid_kernel_image", Verdict::kUnsupported, "unsupported:invalid_device_function", Tier::kSpecific,
                     true, true);
        return Hit("invalid_kernel_image", Verdict::kUnsupported, "unsupported:invalid_kernel_image", Tier::kSpecific, true,
                   true);
      }, Basis::kStatus);
  Add("ptx_toolchain",
      {"compiled with an unsupported toolchain", "cuda_error_unsupported_ptx_version", "unsupported ptx version"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        return Hit("ptx_toolchain", Verdict::kUnsupported, "unsupported:ptx_toolchain", Tier::kSpecific, true, true);
      }, Basis::kStatus);
}

// Memory that ran out, a resource a config exceeds, and faults on the device.
void BuiltinRules::AddMemoryRules() {
  // --- memory ------------------------------------------------------------------------------------
  // vLLM's "No available memory for the cache blocks", "... can be stored in KV cache"; a framework
  // saying memory ran out in its own words ("RuntimeError: Not enough memory. ..."): the KV cache when
  // it says so, otherwise which memory is not said (oom:memory).
  Add("memory_oom",
      {"no available memory for the cache blocks", "can be stored in kv cache", "memory for kv cache",
       "not enough memory", "insufficient memory", "not enough gpu memory", "not enough free memory"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && (c.parsed->level == LogLevel::kInfo || IsAdvisory(c))) return std::nullopt;
        if (Has(c.lower, "no available memory for the cache blocks") || Has(c.lower, "can be stored in kv cache") ||
            Has(c.lower, "memory for kv cache") || (SaysOutOfMemory(c.lower) && Has(c.lower, "kv cache")))
          return Hit("memory_oom", Verdict::kOom, "oom:kv_cache");
        if (SaysOutOfMemory(c.lower)) return Hit("memory_oom", Verdict::kOom, "oom:memory");
        return std::nullopt;
      });
  Add("host_oom",
      {"std::bad_alloc", "cannot allocate memory", "oom-kill", "killed process", "memoryerror",
       "out of host memory", "host memory allocation failed"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (Has(c.lower, "std::bad_alloc") || Has(c.lower, "cannot allocate memory") || Has(c.lower, "oom-kill") ||
            Has(c.lower, "out of host memory") || Has(c.lower, "host memory allocation failed") ||
            (Has(c.lower, "out of memory") && Has(c.lower, "killed process")))
          return Hit("host_oom", Verdict::kOom, "oom:host");
        // Python's MemoryError, but not torch.OutOfMemoryError / torch.cuda.OutOfMemoryError.
        if (IsException(c, "MemoryError")) return Hit("host_oom", Verdict::kOom, "oom:host");
        for (size_t i = c.lower.find("memoryerror"); i != std::string_view::npos;
             i = c.lower.find("memoryerror", i + 1)) {
          if (i >= 2 && c.lower.substr(i - 2, 2) == "of") continue;
          if (i > 0 && std::isalpha(static_cast<unsigned char>(c.lower[i - 1]))) continue;
          return Hit("host_oom", Verdict::kOom, "oom:host");
        }
        return std::nullopt;
      }, Basis::kStatus);
  Add("cuda_oom",
      {"out of memory", "cudaerrormemoryallocation", "outofmemoryerror", "resource_exhausted",
       // TensorFlow's ResourceExhaustedError ("OOM when allocating tensor with shape ..."), and a
       // container the kernel killed for memory as Kubernetes reports it (reason OOMKilled).
       "resourceexhaustederror", "oom when allocating", "oomkilled",
       "cuda_error_out_of_memory", "cublas_status_alloc_failed", "failed to allocate device memory"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && c.parsed->level == LogLevel::kInfo) return std::nullopt;  // "... to avoid out of memory"
        if (Has(c.lower, "oomkilled")) return Hit("cuda_oom", Verdict::kOom, "oom:host");  // the container's memory
        return Hit("cuda_oom", Verdict::kOom, "oom:cuda");
      }, Basis::kStatus);
  // Hardware resource limits a config exceeds: Triton's OutOfResources names the resource
  // ("out of resource: shared memory, Required: 147456, Hardware limit: 101376"), ptxas says
  // "uses too much shared data", the CUDA launch "too many resources requested" (registers).
  Add("resource_limit",
      {"out of resource:", "outofresources", "too much shared data", "too many resources requested for launch",
       "cudaerrorlaunchoutofresources"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && MentionsFallback(c.lower)) return std::nullopt;
        if (Has(c.lower, "shared memory") || Has(c.lower, "shared data"))
          return Hit("resource_limit", Verdict::kUnsupported, "unsupported:shared_memory_limit");
        if (Has(c.lower, "too many resources requested") || Has(c.lower, "launchoutofresources"))
          return Hit("resource_limit", Verdict::kUnsupported, "unsupported:launch_out_of_resources");
        std::string resource = ResourceName(c.raw, c.lower);
        return Hit("resource_limit", Verdict::kUnsupported,
                   "unsupported:resource_limit:" + (resource.empty() ? std::string("unknown") : resource));
      });

  // --- device faults ---------------------------------------------------------------------------------
  Add("illegal_memory_access", {"illegal memory access", "cudaerrorillegaladdress", "cuda_error_illegal_address"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        return Hit("illegal_memory_access", Verdict::kCrashed, "crashed:illegal_memory_access", Tier::kSpecific, true, true);
      }, Basis::kStatus);
  Add("illegal_instruction",
      {"illegal instruction was encountered", "cudaerrorillegalinstruction", "cuda_error_illegal_instruction"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        return Hit("illegal_instruction", Verdict::kCrashed, "crashed:illegal_instruction", Tier::kSpecific, true, true);
      }, Basis::kStatus);
  Add("misaligned_address", {"misaligned address", "cudaerrormisalignedaddress"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        return Hit("misaligned_address", Verdict::kCrashed, "crashed:misaligned_address", Tier::kSpecific, true, true);
      }, Basis::kStatus);
  Add("device_assert", {"device-side assert triggered", "cudaerrorassert", "assertion `"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (Has(c.lower, "assertion `") && !(Has(c.lower, "failed") && Has(c.lower, "thread:"))) return std::nullopt;
        return Hit("device_assert", Verdict::kCrashed, "crashed:device_assert", Tier::kSpecific, true, true);
      }, Basis::kStatus);
  Add("launch_failure", {"unspecified launch failure", "cudaerrorlaunchfailure", "cuda_error_launch_failed"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        return Hit("launch_failure", Verdict::kCrashed, "crashed:unspecified_launch_failure");
      }, Basis::kStatus);
}

// Libraries and frameworks that refuse the problem or the GPU, and a node that cannot run it.
void BuiltinRules::AddRefusalAndNodeRules() {
  // --- libraries that refuse the problem on this GPU -------------------------------------------------
  Add("cudnn",
      {"no execution plans", "cudnn_status_not_supported", "cudnn_status_arch_mismatch", "no valid execution plans",
       "unable to find an engine"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && IsAdvisory(c)) return std::nullopt;
        if (Has(c.lower, "arch_mismatch"))
          return Hit("cudnn", Verdict::kUnsupported, "unsupported:cudnn_arch_mismatch", Tier::kSpecific, true, true);
        if (Has(c.lower, "execution plans"))
          return Hit("cudnn", Verdict::kUnsupported, "unsupported:cudnn_no_execution_plans");
        // PyTorch's cuDNN v8 API: "GET was unable to find an engine to execute this computation".
        if (Has(c.lower, "unable to find an engine"))
          return Hit("cudnn", Verdict::kUnsupported, "unsupported:cudnn_no_engine");
        return Hit("cudnn", Verdict::kUnsupported, "unsupported:cudnn_not_supported");
      }, Basis::kStatus);
  Add("cublas",
      {"cublas_status_not_supported", "cublas_status_arch_mismatch", "cublas_status_execution_failed",
       "cublas_status_internal_error", "cublaslt"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (Has(c.lower, "cublas_status_not_supported") || Has(c.lower, "cublas_status_arch_mismatch")) {
          if (!c.exc && IsAdvisory(c)) return std::nullopt;
          return Hit("cublas", Verdict::kUnsupported, "unsupported:cublas_not_supported");
        }
        if (Has(c.lower, "cublas_status_execution_failed"))
          return Hit("cublas", Verdict::kCrashed, "crashed:cublas_execution_failed");
        if (Has(c.lower, "cublas_status_internal_error"))
          return Hit("cublas", Verdict::kCrashed, "crashed:cublas_internal_error");
        return std::nullopt;
      }, Basis::kStatus);
  Add("cutlass",
      {"error internal", "kerrorinternal", "error not supported", "kerrornotsupported", "cutlass"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        const bool cutlass = Has(c.lower, "cutlass");
        if (Has(c.lower, "error internal") || Has(c.lower, "kerrorinternal"))
          return Hit("cutlass", Verdict::kCrashed, "crashed:cutlass:error_internal", Tier::kSpecific, false);
        if ((Has(c.lower, "error not supported") || Has(c.lower, "kerrornotsupported")) && cutlass)
          return Hit("cutlass", Verdict::kUnsupported, "unsupported:cutlass:not_supported", Tier::kSpecific, false);
        if (cutlass && (Has(c.lower, "failed to initialize") || Has(c.lower, "initialization failed") ||
                        Has(c.lower, "initialize failed") || Has(c.lower, "failed to init") ||
                        Has(c.lower, "can_implement") || Has(c.lower, "cannot implement")))
          return Hit("cutlass", Verdict::kCrashed, "crashed:cutlass:init_failed", Tier::kSpecific, false);
        return std::nullopt;
      });

  // --- arch gates: the framework refuses this GPU in words ---------------------------------------------
  Add("arch_gate", ArchGateNeedles(), [](const LineContext& c) -> std::optional<RuleHit> {
    if (!c.exc && IsAdvisory(c)) return std::nullopt;  // first: a WARNING line is settled by its level
    if (!((HasArchRefusalPhrase(c.lower) && MentionsArch(c.lower)) || ArchOnly(c.lower))) return std::nullopt;
    return Hit("arch_gate", Verdict::kUnsupported, "unsupported:arch_gate:" + Norm(c), Tier::kSpecific, false, true);
  });

  // --- the node, not the config ------------------------------------------------------------------------
  Add("infra",
      {"no space left on device", "driver version is insufficient", "driver/library version mismatch",
       "busy or unavailable", "cudaerrordevicesunavailable", "uncorrectable ecc error", "nvrm: xid",
       "address already in use", "no cuda gpus are available", "found no nvidia driver",
       "no cuda-capable device is detected", "cudaerrornodevice", "cuda driver initialization failed",
       "gpu has fallen off the bus", "cudaerrorsystemdrivermismatch",
       // CUDA's system-not-ready (802: the fabric manager has not initialised an NVSwitch node),
       // uncorrectable NVLink errors and Xid reports (cudaError_t/CUresult, driver_types.h).
       "system not yet initialized", "cudaerrorsystemnotready", "cuda_error_system_not_ready", "fabric manager",
       "uncorrectable nvlink", "nvlink uncorrectable", "cudaerrornvlinkuncorrectable", "cuda_error_nvlink_uncorrectable",
       "xid", "cudaerroreccuncorrectable", "cuda_error_ecc_uncorrectable",
       // The network transport: NCCL's IB transport ("NET/IB : Got completion from peer ... with
       // error 12", src/transport/net_ib.cc) and ibverbs' completion statuses (ibv_wc_status_str).
       "got completion from peer", "transport retry counter exceeded", "rnr retry counter exceeded",
       "local protection error", "work request flushed error", "remote access error", "remote operation error",
       // Shared memory that ran out: PyTorch's DataLoader ("insufficient shared memory (shm)",
       // torch/csrc/DataLoader.cpp) and NCCL ("Error while creating shared memory segment", shmutils.cc).
       "insufficient shared memory", "shared memory segment",
       // PyTorch's DataLoader after a worker's bus error ("It is possible that dataloader's workers
       // are out of shared memory. Please try to raise your shared memory limit.", dataloader.py), and
       // numba's CudaSupportError (no driver, no device: numba/cuda/cudadrv/error.py).
       "out of shared memory", "cudasupporterror",
       // NVML and the driver, as nvidia-smi and the NVIDIA container toolkit say they are missing or
       // unreachable ("Failed to initialize NVML: Driver/library version mismatch", "NVIDIA-SMI has
       // failed because it couldn't communicate with the NVIDIA driver", "nvml error: driver not
       // loaded"), and a GPU NVML can no longer reach ("Unable to determine the device handle for GPU").
       "failed to initialize nvml", "couldn't communicate with the nvidia driver", "driver not loaded",
       "unable to determine the device handle"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (c.parsed->level == LogLevel::kWarning || c.parsed->level == LogLevel::kInfo) return std::nullopt;
        if (Has(c.lower, "no space left on device")) return Hit("infra", Verdict::kInfraError, "infra_error:disk_full");
        if (Has(c.lower, "driver version is insufficient") || Has(c.lower, "version mismatch") ||
            Has(c.lower, "drivermismatch"))
          return Hit("infra", Verdict::kInfraError, "infra_error:driver_mismatch");
        if (Has(c.lower, "busy or unavailable") || Has(c.lower, "devicesunavailable"))
          return Hit("infra", Verdict::kInfraError, "infra_error:gpu_unavailable");
        // An Xid as the driver reports it ("NVRM: Xid (PCI:0000:3b:00): 79"), not "xid" inside a word.
        if (Has(c.lower, "ecc error") || Has(c.lower, "nvrm: xid") || Has(c.lower, "xid (pci") ||
            Has(c.lower, "fallen off the bus") ||
            Has(c.lower, "nvlink") || Has(c.lower, "eccuncorrectable") || Has(c.lower, "ecc_uncorrectable"))
          return Hit("infra", Verdict::kInfraError, "infra_error:gpu_fault");
        if (Has(c.lower, "system not yet initialized") || Has(c.lower, "systemnotready") ||
            Has(c.lower, "system_not_ready"))
          return Hit("infra", Verdict::kInfraError, "infra_error:system_not_ready");
        if (Has(c.lower, "fabric manager")) {
          // Only the fabric manager failing or absent, not a line that mentions it in passing.
          if (!(Has(c.lower, "not ") || Has(c.lower, "fail") || Has(c.lower, "error"))) return std::nullopt;
          return Hit("infra", Verdict::kInfraError, "infra_error:system_not_ready");
        }
        if (Has(c.lower, "completion from peer") || Has(c.lower, "retry counter exceeded") ||
            Has(c.lower, "local protection error") || Has(c.lower, "work request flushed") ||
            Has(c.lower, "remote access error") || Has(c.lower, "remote operation error")) {
          // net_ib.cc says "with error N" (older) or "with status=N" (newer); a completion without
          // either is no fault.
          if (Has(c.lower, "completion from peer") && !Has(c.lower, "error") && !Has(c.lower, "status="))
            return std::nullopt;
          return Hit("infra", Verdict::kInfraError, "infra_error:network");
        }
        if (Has(c.lower, "unable to determine the device handle"))
          return Hit("infra", Verdict::kInfraError, "infra_error:gpu_fault");
        if (Has(c.lower, "failed to initialize nvml") || Has(c.lower, "couldn't communicate with the nvidia driver") ||
            Has(c.lower, "driver not loaded"))
          return Hit("infra", Verdict::kInfraError, "infra_error:no_gpu");
        if (Has(c.lower, "cudasupporterror")) return Hit("infra", Verdict::kInfraError, "infra_error:no_gpu");
        if (Has(c.lower, "shared memory")) {
          if (!(Has(c.lower, "insufficient") || Has(c.lower, "error") || Has(c.lower, "fail") ||
                Has(c.lower, "out of shared memory")))
            return std::nullopt;
          return Hit("infra", Verdict::kInfraError, "infra_error:shm");
        }
        if (Has(c.lower, "address already in use")) return Hit("infra", Verdict::kInfraError, "infra_error:port_in_use");
        if (Has(c.lower, "no cuda gpus are available") || Has(c.lower, "found no nvidia driver") ||
            Has(c.lower, "no cuda-capable device") || Has(c.lower, "cudaerrornodevice") ||
            Has(c.lower, "cuda driver initialization failed"))
          return Hit("infra", Verdict::kInfraError, "infra_error:no_gpu");
        return std::nullopt;  // a needle inside another word ("xid" in "oxide")
      }, Basis::kStatus);
}

}  // namespace gauntlet::classifier
