#include "classifier/builtin_rules.h"

#include <array>
#include <cctype>
#include <stdexcept>

#include "classifier/check_report.h"
#include "classifier/normalize.h"
#include "classifier/refusals.h"
#include "classifier/report_grammar.h"
#include "classifier/status_vocabulary.h"

namespace gauntlet::classifier {
namespace {

bool Has(std::string_view lower, std::string_view needle) { return lower.find(needle) != std::string_view::npos; }

template <size_t N>
bool HasAny(std::string_view lower, const std::array<std::string_view, N>& needles) {
  for (auto n : needles)
    if (Has(lower, n)) return true;
  return false;
}

// Words that turn a refusal into a notice: the program carries on another way.
constexpr std::array<std::string_view, 9> kFallbackWords = {
    "fall back", "falling back", "fallback", "skip", "instead", "will use", "defaulting to",
    "will be disabled", "is disabled"};

bool MentionsFallback(std::string_view lower) { return HasAny(lower, kFallbackWords); }

// A notice rather than a refusal: logged below ERROR, or says how it carries on.
// Several rules may ask about one line: computed once per line.
bool IsAdvisory(const LineContext& c) {
  if (c.advisory >= 0) return c.advisory != 0;
  const LogLevel l = c.parsed->level;
  static constexpr std::array<std::string_view, 5> kMore = {"warn", "disabl", ", using", "ignor", "not recommended"};
  const bool advisory = l == LogLevel::kInfo || l == LogLevel::kDebug || l == LogLevel::kWarning ||
                        MentionsFallback(c.lower) || HasAny(c.lower, kMore);
  c.advisory = advisory ? 1 : 0;
  return advisory;
}

RuleHit Hit(std::string_view rule, Verdict verdict, std::string key, Tier tier = Tier::kSpecific,
            bool keyed = true, bool strong = false) {
  RuleHit h;
  h.rule = rule;
  h.verdict = verdict;
  h.key = std::move(key);
  h.tier = tier;
  h.keyed = keyed;
  h.strong = strong;
  return h;
}

// The text in single quotes after `marker`, e.g. Value 'sm_120a' -> "sm_120a".
std::string QuotedAfter(std::string_view raw, std::string_view lower, std::string_view marker) {
  size_t at = lower.find(marker);
  if (at == std::string_view::npos) return "";
  size_t open = raw.find('\'', at + marker.size());
  if (open == std::string_view::npos || open > at + marker.size() + 4) return "";
  size_t close = raw.find('\'', open + 1);
  if (close == std::string_view::npos || close - open > 40) return "";
  return SanitizeUtf8(raw.substr(open + 1, close - open - 1));
}

// "out of resource: tensor memory, Required: ..." -> "tensor_memory" (lowercase, '_' for spaces).
std::string ResourceName(std::string_view raw, std::string_view lower) {
  size_t at = lower.find("out of resource:");
  if (at == std::string_view::npos) return "";
  std::string_view rest = TrimSpace(raw.substr(at + 16));
  std::string out;
  for (char ch : rest.substr(0, 40)) {
    if (ch == ',' || ch == '.' || ch == ';') break;
    out.push_back(ch == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  }
  return SanitizeUtf8(out);
}

// Normalised message for plain-line signatures; the prefix-free message reads best.
std::string Norm(const LineContext& c, size_t max_len = 120) { return NormalizeMessage(TrimSpace(c.parsed->message), max_len); }

bool IsException(const LineContext& c, std::string_view type) { return c.exc && c.exc->type == type; }

}  // namespace

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

// A value of a status vocabulary (status_vocabulary.h: the CUDA runtime and driver, cuBLAS, cuDNN,
// cuFFT, cuSPARSE, cuSOLVER, cuRAND, NVRTC, NCCL, errno, absl) named on the line decides by its
// table: after the rules above, whose keys and fallback checks stay, before the generic ones below.
void BuiltinRules::AddStatusRule() {
  Add("status", StatusTriggerNeedles(), [](const LineContext& c) -> std::optional<RuleHit> {
    if (!c.exc && (c.parsed->level == LogLevel::kInfo || c.parsed->level == LogLevel::kDebug || IsAdvisory(c)))
      return std::nullopt;
    std::optional<StatusHit> s = FindStatus(c.raw, c.lower);
    if (!s || s->value->verdict == Verdict::kPassed) return std::nullopt;
    if (s->vocabulary->id == "python" || s->vocabulary->id == "signals") return std::nullopt;
    // A refusal says what it refuses (refusals.h): its family names the key (XLA's "UNIMPLEMENTED:
    // Unsupported algorithm ... TF32" is unsupported:dtype), the status code only the verdict.
    if (c.exc && s->value->verdict == Verdict::kUnsupported)
      if (std::optional<std::string> key = RefusalKey(*c.exc)) return Hit("status", Verdict::kUnsupported, *key);
    // NCCL's system and remote errors are real but echoed by every peer of a rank that failed first
    // (tier 2, as NCCL WARN lines); a deadline is the program's own report (tier 3, as `deadline`).
    Tier tier = Tier::kSpecific;
    if (s->vocabulary->id == "nccl" && s->value->verdict == Verdict::kInfraError) tier = Tier::kNccl;
    else if (s->value->verdict == Verdict::kTimeout) tier = Tier::kGeneric;
    return Hit("status", s->value->verdict, s->Signature(), tier);
  }, Basis::kStatus);
}

// The stage's own output checks, NCCL, fatal signals, then refusals in exception form and pytest's
// summary, last.
void BuiltinRules::AddCheckAndCrashRules() {
  // --- output checks inside the stage ------------------------------------------------------------------
  // A check of the program's own result that failed, in its framework's words (check_report.h):
  // an expected-versus-actual report is a wrong result wherever it appears. On an exception line
  // only an assertion type counts: "RuntimeError: expected ... got ..." validates an argument.
  Add("failed_check", CheckReportNeedles(), [](const LineContext& c) -> std::optional<RuleHit> {
    if (c.exc && c.exc->type.find("Assert") == std::string::npos && c.exc->type != "ComparisonFailure")
      return std::nullopt;
    if (!c.exc && (c.parsed->level == LogLevel::kInfo || c.parsed->level == LogLevel::kDebug ||
                   c.parsed->level == LogLevel::kWarning))
      return std::nullopt;
    std::string lower_msg = ToLowerAscii(c.parsed->message.substr(0, 4096));
    const CheckReport k = FailedCheck(lower_msg);
    if (k == CheckReport::kNone) return std::nullopt;
    return Hit("failed_check", Verdict::kWrongOutput,
               k == CheckReport::kResultLine ? "wrong_output:result_line" : "wrong_output:check_failed",
               Tier::kSpecific, false);
  });
  Add("mismatch",
      {"are not close", "are not equal", "not equal to tolerance", "mismatched elements", "mismatch",
       "elements differ", "values differ", "tolerance", "tol=", "margin of error", "nan detected", "contains nan",
       "absolute difference", "relative difference",
       "accuracy check failed"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        const bool nan = Has(c.lower, "nan detected") || Has(c.lower, "contains nan");
        if (!nan && !IsMismatchReport(c.lower)) return std::nullopt;
        if (!c.exc && IsAdvisory(c)) return std::nullopt;
        return Hit("mismatch", Verdict::kWrongOutput, nan ? "wrong_output:nan" : "wrong_output:mismatch", Tier::kSpecific,
                   false);
      });

  // --- NCCL ------------------------------------------------------------------------------------------
  Add("nccl",
      {"nccl warn", "ncclunhandledcudaerror", "ncclsystemerror", "ncclinternalerror", "ncclinvalidusage",
       "ncclremoteerror", "nccl error"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        std::string_view msg = c.parsed->message;
        size_t at = c.lower.find("nccl warn");
        std::string detail;
        if (at != std::string_view::npos) {
          // lower is raw lowercased byte for byte, so offsets carry over.
          detail = NormalizeMessage(TrimSpace(c.raw.substr(std::min(at + 9, c.raw.size()))), 80);
        } else {
          detail = NormalizeMessage(TrimSpace(msg), 80);
        }
        const bool timeout = Has(c.lower, "timeout") || Has(c.lower, "timed out");
        const Verdict v = timeout ? Verdict::kTimeout : Verdict::kCrashed;
        return Hit("nccl", v, std::string(Name(v)) + ":nccl:" + detail, Tier::kNccl, false);
      });

  // --- fatal signals written to the log ------------------------------------------------------------
  Add("signal",
      {"segmentation fault", "sigsegv", "bus error", "sigbus", "floating point exception", "sigfpe",
       "illegal instruction", "sigill", "aborted", "sigabrt", "core dumped", "fatal python error"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        std::string_view msg = TrimSpace(c.parsed->message);
        std::string_view l = c.lower;
        auto signal_hit = [](std::string_view name, Tier tier) {
          return Hit("signal", Verdict::kCrashed, "crashed:signal:" + std::string(name), tier);
        };
        if (Has(l, "segmentation fault") || Has(l, "sigsegv")) return signal_hit("SIGSEGV", Tier::kGeneric);
        if (Has(l, "bus error") || Has(l, "sigbus")) return signal_hit("SIGBUS", Tier::kGeneric);
        if (Has(l, "floating point exception") || Has(l, "sigfpe")) return signal_hit("SIGFPE", Tier::kGeneric);
        if (Has(l, "sigill") || msg.starts_with("Illegal instruction") || Has(l, "illegal instruction (core"))
          return signal_hit("SIGILL", Tier::kGeneric);
        // Abort nearly always follows a printed C++ exception, which says more.
        if (Has(l, "sigabrt") || msg.starts_with("Aborted") || Has(l, "fatal python error: aborted"))
          return signal_hit("SIGABRT", Tier::kSecondary);
        if (Has(l, "fatal python error"))
          return Hit("signal", Verdict::kCrashed, "crashed:fatal_python_error:" + Norm(c, 80), Tier::kGeneric);
        return std::nullopt;
      }, Basis::kStatus);

  // --- deadlines inside the program ---------------------------------------------------------------------
  // A program that gave up waiting says so: a rendezvous, barrier or store that timed out
  // (torch.distributed's "Timed out after N seconds waiting for clients", "Socket Timeout",
  // RendezvousTimeoutError), a status of DEADLINE_EXCEEDED (absl/gRPC, XLA's coordination service),
  // a DataLoader that "timed out after N seconds". Its own words; a specific cause in the same rank
  // (an OOM, an illegal address) still outranks it.
  Add("deadline",
      {"deadline_exceeded", "deadline exceeded", "timed out", "timeouterror", "socket timeout", "wait timeout",
       // The time limits of the systems that run a job, in their documented words: GitHub Actions
       // ("has exceeded the maximum execution time of 360 minutes"), GitLab ("execution took longer
       // than 1h0m0s"), Slurm ("CANCELLED AT ... DUE TO TIME LIMIT"), pytest-timeout ("Failed:
       // Timeout >60.0s", "+++ Timeout +++"), Kubernetes and gRPC (DeadlineExceeded).
       "maximum execution time", "took longer than", "due to time limit", "timeout >", "+ timeout +", "deadlineexceeded"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && IsAdvisory(c)) return std::nullopt;
        const bool deadline = Has(c.lower, "deadline_exceeded") || Has(c.lower, "deadline exceeded") ||
                              Has(c.lower, "socket timeout") || Has(c.lower, "wait timeout") ||
                              Has(c.lower, "timeouterror") || Has(c.lower, "deadlineexceeded") ||
                              Has(c.lower, "exceeded the maximum execution time") ||
                              Has(c.lower, "execution took longer than") || Has(c.lower, "due to time limit") ||
                              Has(c.lower, "failed: timeout >") || Has(c.lower, "+ timeout +");
        static constexpr std::array<std::string_view, 14> kWaitWords = {
            "rendezvous", "barrier", "store", "waiting", "initializ", "process group", "client", "connect",
            "heartbeat", "worker", "dataloader", "collective", "socket", " after "};
        if (!deadline && !(Has(c.lower, "timed out") && HasAny(c.lower, kWaitWords))) return std::nullopt;
        return Hit("deadline", Verdict::kTimeout, "timeout:deadline", Tier::kGeneric, false);
      });

  // --- a native program that stopped itself, in its runtime's words ------------------------------------
  // glog's and absl's CHECK ("Check failed: cond"), libstdc++'s verbose terminate handler
  // ("terminate called after throwing an instance of 'T'", then "  what():  msg"), Rust's panic
  // ("thread 'main' panicked at src/x.rs:4:5:"), Go's ("panic: runtime error: ..."): an invariant of
  // the program or a library failed. Tier 3 as an uncaught exception is: a fixed fact on the same
  // rank (an OOM or CUDA status inside the what() line matched the rules above) says more.
  Add("native_crash", {"check failed:", "terminate called after throwing", "what():", "panicked at", "panic: "},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && (c.parsed->level == LogLevel::kInfo || c.parsed->level == LogLevel::kDebug)) return std::nullopt;
        std::string_view msg = TrimSpace(c.parsed->message);
        auto after = [&](std::string_view marker) {
          const size_t at = c.lower.find(marker);
          return at == std::string_view::npos ? std::string_view() : TrimSpace(c.raw.substr(at + marker.size()));
        };
        if (Has(c.lower, "check failed:"))
          return Hit("native_crash", Verdict::kCrashed, "crashed:check_failed:" + NormalizeMessage(after("check failed:"), 80),
                     Tier::kGeneric);
        if (Has(c.lower, "terminate called after throwing")) {
          std::string type = QuotedAfter(c.raw, c.lower, "instance of");
          // Only the throw: its what() line says why (a watchdog's, a CUDA error), and decides.
          return Hit("native_crash", Verdict::kCrashed, "crashed:cpp_exception:" + (type.empty() ? std::string("unknown") : type),
                     Tier::kSecondary);
        }
        if (msg.starts_with("what():"))
          return Hit("native_crash", Verdict::kCrashed, "crashed:cpp_exception:" + NormalizeMessage(after("what():"), 80),
                     Tier::kGeneric);
        if (Has(c.lower, "' panicked at") || msg.starts_with("panic: "))
          return Hit("native_crash", Verdict::kCrashed, "crashed:panic", Tier::kGeneric);
        return std::nullopt;
      });

  // --- a sanitizer's report ---------------------------------------------------------------------
  // The program ran under a checker that found a fault: the compiler sanitizers ("==42==ERROR:
  // AddressSanitizer: heap-buffer-overflow", "runtime error:" of UBSan, ThreadSanitizer's "WARNING:
  // ThreadSanitizer: data race") and compute-sanitizer's memcheck ("========= Invalid __global__ read
  // of size 4 bytes", "========= ERROR SUMMARY: 3 errors"). A crash of the program, named by the tool.
  Add("sanitizer",
      {"addresssanitizer:", "threadsanitizer:", "undefinedbehaviorsanitizer", "memorysanitizer:", "invalid __global__",
       "invalid __shared__", "error summary:"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        std::string_view l = c.lower;
        for (std::string_view tool : {"addresssanitizer:", "threadsanitizer:", "memorysanitizer:"})
          if (const size_t at = l.find(tool); at != std::string_view::npos) {
            std::string_view kind = TrimSpace(c.raw.substr(at + tool.size()));
            kind = kind.substr(0, kind.find(' '));
            return Hit("sanitizer", Verdict::kCrashed,
                       "crashed:sanitizer:" + NormalizeMessage(kind.empty() ? tool.substr(0, tool.size() - 1) : kind, 60));
          }
        if (Has(l, "undefinedbehaviorsanitizer")) return Hit("sanitizer", Verdict::kCrashed, "crashed:sanitizer:undefined_behavior");
        if (Has(l, "invalid __global__") || Has(l, "invalid __shared__"))
          return Hit("sanitizer", Verdict::kCrashed, "crashed:sanitizer:invalid_access");
        // compute-sanitizer's summary: "ERROR SUMMARY: 0 errors" is a clean run.
        if (const size_t at = l.find("error summary:"); at != std::string_view::npos && Has(l, "=========")) {
          std::string_view rest = TrimSpace(l.substr(at + 14));
          if (!rest.empty() && rest[0] != '0' && std::isdigit(static_cast<unsigned char>(rest[0])))
            return Hit("sanitizer", Verdict::kCrashed, "crashed:sanitizer:errors", Tier::kGeneric);
        }
        return std::nullopt;
      });

  // The shell's "Killed" for a SIGKILLed child: the OOM killer, unless we killed it ourselves.
  Add("killed", {"killed"}, [](const LineContext& c) -> std::optional<RuleHit> {
    std::string_view msg = TrimSpace(c.parsed->message);
    bool shell = msg == "Killed";
    if (!shell) {
      // "bash: line 1:  4242 Killed   python3 ..." / "/bin/sh: 1: 4242 Killed"
      size_t k = msg.find(" Killed");
      if (k != std::string_view::npos && k > 0) {
        size_t i = k;
        while (i > 0 && msg[i - 1] == ' ') --i;
        shell = i > 0 && std::isdigit(static_cast<unsigned char>(msg[i - 1]));
      }
    }
    if (!shell) return std::nullopt;
    RuleHit h = Hit("killed", Verdict::kOom, "oom:host", Tier::kNccl);
    h.needs_sigkill = true;
    return h;
  });

  // Framework refusals in exception form (NotImplementedError, a ValueError/RuntimeError saying
  // "not supported" / "only supports" / "must be a multiple of", an optional backend's package
  // missing): the decision is refusals.h's, from the exception's type and message. Last among
  // the built-ins, so every fixed fact above (OOM, arch gate, cuDNN, illegal address...) wins.
  Add("refusal", RefusalNeedles(), [](const LineContext& c) -> std::optional<RuleHit> {
    if (!c.exc) return std::nullopt;
    std::optional<std::string> key = RefusalKey(*c.exc);
    if (!key) return std::nullopt;
    return Hit("refusal", Verdict::kUnsupported, std::move(*key));
  }, Basis::kException);

  // pytest's summary "FAILED tests/x.py::test_y - RuntimeError: msg"; the classifier turns the
  // part after " - " into an exception line.
  Add("pytest_failed", {"failed "}, [](const LineContext& c) -> std::optional<RuleHit> {
    std::string_view msg = c.parsed->message;
    if (!msg.starts_with("FAILED ") || msg.find(" - ") == std::string_view::npos) return std::nullopt;
    return Hit("pytest_failed", Verdict::kCrashed, "", Tier::kGeneric, false);
  });
}

}  // namespace gauntlet::classifier
