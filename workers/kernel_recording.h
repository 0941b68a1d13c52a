// The worker's side of the kernel recorder (docs/KERNELS.md "Kernel recorder"): whether this node
// can record (the library beside `gauntlet` and a loadable libcupti), the stage environment that
// loads it (CUDA_INJECTION64_PATH), reading the per-process record files after a stage, and the
// dispatch check that turns a passed stage on the wrong kernels into `fallback`.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "core/kernel_record.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// The recorder's file name, looked for beside the gauntlet binary.
inline constexpr const char* kKernelRecorderFile = "libgauntlet_kernrec.so";

// What this node can record, found once at start: `library` is the recorder's path when it and
// libcupti are both there (empty otherwise), `description` says which, or why not, for the
// registration's fingerprint ("kernel_recorder") and the start-up line.
struct KernelRecorder {
  std::string library;
  std::string description;
};
// Looks for `exe_dir`/libgauntlet_kernrec.so and a libcupti the recorder can load (dlopen'ed and
// closed again). `has_gpus` false: records nothing ("no GPUs"). Thread-safe; call at start.
KernelRecorder FindKernelRecorder(const std::string& exe_dir, bool has_gpus);

// True if `stage` runs under the recorder: the node has one, the trial holds GPUs and the stage
// does not say "record_kernels": false.
bool RecordsKernels(const TrialContext& ctx, const nlohmann::json& stage);
// The folder the stage's processes write their records into (workdir/kernrec/STAGE).
std::string KernelRecordDir(const TrialContext& ctx, const std::string& stage_name);
// Adds CUDA_INJECTION64_PATH and GAUNTLET_KERNREC_DIR to *env when RecordsKernels (a stage's own
// "env" may still override them); creates the record folder.
void AddKernelRecorderEnv(const TrialContext& ctx, const nlohmann::json& stage, std::map<std::string, std::string>* env);
// Reads every record file in `dir` (at most 256 files of at most 4 MiB; others are problems) and
// merges them. A missing folder is a record of 0 processes.
KernelRecord ReadKernelRecords(const std::string& dir);
// After a recorded stage: reads its records into *trial_record, puts the stage's dispatch check in
// out->summary["dispatch"], logs it, and turns a passed stage whose kernels never matched its
// expectation into `fallback` (signature fallback:FAMILY). For a stage not recorded (no recorder
// or GPU here, or record_kernels: false), a passed stage whose dispatch expectation applies is
// marked `unverified`, saying why; anything else is left as it is.
void ApplyKernelRecord(const TrialContext& ctx, const nlohmann::json& stage, StageOutcome* out,
                       KernelRecord* trial_record);

}  // namespace gauntlet::worker
