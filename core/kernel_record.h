// What the kernel recorder (libgauntlet_kernrec.so, kernels/src/kernrec/kernrec.cpp) saw: its
// per-process record files parsed, merged over a stage's processes, and the bounded form a trial's
// result stores and the API serves (docs/KERNELS.md "Kernel recorder"). Pure: no file I/O here.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gauntlet {

// Every function here is pure and thread-safe.

inline constexpr size_t kMaxRecordNames = 4096;     // distinct kernel names a merged record keeps
inline constexpr size_t kMaxRecordNameChars = 1024; // a kernel name is cut there
inline constexpr size_t kRecordTopKernels = 20;     // kernels (by total time) a stored record keeps

// One kernel's totals: launches, summed and longest duration.
struct KernelStat {
  int64_t count = 0, total_ns = 0, max_ns = 0;
};

// One process's record file, as written by the recorder.
struct ProcessKernels {
  int64_t pid = 0;
  std::string state;        // started | running | complete
  std::string cupti = "ok"; // "ok", or why CUPTI could not record
  int64_t dropped = 0, names_dropped = 0;
  std::map<std::string, KernelStat> kernels;  // demangled name -> totals
};

// Parses one record file's text. Invalid (naming the line) for anything that is not the recorder's
// format: a wrong header or version, a malformed line, negative numbers. Reads at most
// kMaxRecordNames kernels (the rest counted in names_dropped).
Result<ProcessKernels> ParseKernelRecord(std::string_view text);

// The kernels of every process of a stage (or a trial), merged, with what makes it incomplete.
struct KernelRecord {
  int processes = 0;    // record files read
  int incomplete = 0;   // processes whose record did not reach `state complete` (killed, os._exit)
  int64_t dropped = 0;  // CUPTI's dropped records, summed
  int64_t names_dropped = 0;  // launches not kept: past a name cap (the recorder's or this merge's)
  std::vector<std::string> problems;  // unreadable files, CUPTI unavailable ... (at most 8)
  std::map<std::string, KernelStat> kernels;
  // True when every launch of every process that initialised CUDA is in `kernels`: at least one
  // process, all complete, nothing dropped, no problems. Only a complete record can prove an absence.
  bool Complete() const;
};

// Adds one process's kernels to *rec (names merged; past kMaxRecordNames counted as dropped).
void MergeProcess(KernelRecord* rec, const ProcessKernels& p);
// Adds a whole record (another stage's) to *rec.
void MergeRecord(KernelRecord* rec, const KernelRecord& other);
// Notes a problem (a file that could not be read or parsed); keeps at most 8.
void AddProblem(KernelRecord* rec, std::string problem);

// The stored, served form: {"processes", "complete", "incomplete", "dropped", "names_dropped",
// "launches", "gpu_ns", "distinct", "problems", "top": [{"name", "family", "count", "total_ns",
// "max_ns"}] (at most `top`, by total time), "omitted" (distinct kernels not in top)}.
nlohmann::json KernelRecordJson(const KernelRecord& rec, size_t top = kRecordTopKernels);
// Checks and bounds a record that arrived in a report (the JSON above): Invalid naming the field
// when it is not that shape; on success the record, cut to `top` kernels and bounded names.
Result<nlohmann::json> NormalizeKernelRecordJson(const nlohmann::json& j, size_t top = kRecordTopKernels);

}  // namespace gauntlet
