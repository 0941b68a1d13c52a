#include "workers/kernel_recording.h"

#include <unistd.h>

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/dispatch.h"

namespace gauntlet::worker {
using nlohmann::json;
namespace fs = std::filesystem;

KernelRecorder FindKernelRecorder(const std::string& exe_dir, bool has_gpus) {
  KernelRecorder r;
  if (!has_gpus) {
    r.description = "unavailable: no GPUs";
    return r;
  }
  const std::string lib = (exe_dir.empty() ? std::string(".") : exe_dir) + "/" + kKernelRecorderFile;
  std::error_code ec;
  if (!fs::exists(lib, ec)) {
    r.description = std::string("unavailable: no ") + kKernelRecorderFile + " beside gauntlet";
    return r;
  }
  // The same places the recorder itself tries (kernels/src/kernrec/kernrec.cpp), so a node that
  // says it records does.
  std::vector<std::string> tries = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
  if (const char* e = getenv("GAUNTLET_KERNREC_CUPTI")) tries.push_back(e);
  tries.push_back(exe_dir + "/libcupti.so.13");
  tries.push_back("/usr/local/cuda/lib64/libcupti.so.13");
  tries.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  for (auto& t : tries) {
    void* h = dlopen(t.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!h) continue;
    const bool has_api = dlsym(h, "cuptiActivityRegisterCallbacks") != nullptr;
    dlclose(h);
    if (!has_api) continue;
    r.library = fs::absolute(lib, ec).string();
    r.description = std::string(kKernelRecorderFile) + " with " + t;
    return r;
  }
  r.description = "unavailable: no libcupti with the activity API (LD_LIBRARY_PATH, beside gauntlet, /usr/local/cuda)";
  return r;
}

bool RecordsKernels(const TrialContext& ctx, const json& stage) {
  if (ctx.kernel_recorder.empty() || ctx.gpus.empty()) return false;
  if (stage.value("kind", "") == "probe") return false;  // a question, not a run: what it launches is no dispatch
  return !(stage.contains("record_kernels") && stage["record_kernels"].is_boolean() && !stage["record_kernels"].get<bool>());
}

std::string KernelRecordDir(const TrialContext& ctx, const std::string& stage_name) {
  return ctx.workdir + "/kernrec/" + stage_name;
}

void AddKernelRecorderEnv(const TrialContext& ctx, const json& stage, std::map<std::string, std::string>* env) {
  if (!RecordsKernels(ctx, stage)) return;
  const std::string dir = KernelRecordDir(ctx, stage.value("name", "stage"));
  std::error_code ec;
  fs::create_directories(dir, ec);
  // The recorder writes as the stage does: under a trial's own user, the folders are that user's.
  if (ctx.user)
    for (const std::string& d : {fs::path(dir).parent_path().string(), dir})
      if (chown(d.c_str(), ctx.user->uid, ctx.user->gid) != 0) ctx.log->Append("gauntlet: cannot give " + d + " to the trial's user\n");
  (*env)["CUDA_INJECTION64_PATH"] = ctx.kernel_recorder;
  (*env)["GAUNTLET_KERNREC_DIR"] = dir;
}

KernelRecord ReadKernelRecords(const std::string& dir) {
  KernelRecord rec;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  int files = 0;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("kernrec.", 0) != 0 || name.size() < 4 || name.substr(name.size() - 4) != ".txt") continue;
    if (++files > 256) {
      AddProblem(&rec, "more than 256 record files; the rest were not read");
      break;
    }
    std::error_code sec;
    const auto size = fs::file_size(it->path(), sec);
    if (sec || size > (4u << 20)) {
      AddProblem(&rec, name + ": unreadable or over 4 MiB");
      continue;
    }
    std::ifstream in(it->path());
    std::stringstream ss;
    ss << in.rdbuf();
    auto p = ParseKernelRecord(ss.str());
    if (!p.ok()) {
      AddProblem(&rec, name + ": " + p.status().field() + ": " + p.status().message());
      continue;
    }
    MergeProcess(&rec, *p);
  }
  return rec;
}

namespace {
// "backend=flash expects kernels matching /flash_fwd/": the expectation a dispatch check judged, for the log.
std::string Expectation(const DispatchCheck& c) { return c.param + "=" + c.value + " expects kernels matching /" + c.pattern + "/"; }
}  // namespace

void ApplyKernelRecord(const TrialContext& ctx, const json& stage, StageOutcome* out, KernelRecord* trial_record) {
  if (!RecordsKernels(ctx, stage)) {
    // A dispatch expectation that nothing here can check is said to be unchecked, never silent.
    if (!stage.contains("dispatch") || out->verdict != Verdict::kPassed || stage.value("kind", "") == "probe") return;
    DispatchCheck c = JudgeDispatch(stage["dispatch"], ctx.config, KernelRecord{});
    if (c.kind == DispatchCheck::Kind::kNone) return;
    c.kind = DispatchCheck::Kind::kUnverified;
    c.matched.clear();
    c.family.clear();
    c.reason = ctx.kernel_recorder.empty() || ctx.gpus.empty()
                   ? "this node records no kernels (no kernel recorder or no CUPTI here, or no GPU for the trial)"
                   : "the stage records no kernels (record_kernels: false)";
    out->summary["dispatch"] = DispatchCheckJson(c);
    ctx.log->Append("gauntlet: dispatch unverified: " + Expectation(c) + ": " + c.reason + "\n");
    return;
  }
  const KernelRecord rec = ReadKernelRecords(KernelRecordDir(ctx, out->stage));
  MergeRecord(trial_record, rec);
  int64_t launches = 0;
  for (auto& [n, k] : rec.kernels) launches += k.count;
  ctx.log->Append("gauntlet: kernel record: " + std::to_string(rec.processes) + " process(es), " +
                  std::to_string(rec.kernels.size()) + " kernel(s), " + std::to_string(launches) + " launch(es)" +
                  (rec.Complete() ? "" : " (incomplete)") + "\n");
  // The top kernels by time, in the log itself, so `gauntlet logs` and the trial page show them.
  const json top = KernelRecordJson(rec, 10);
  for (auto& k : top["top"]) {
    char line[96];
    snprintf(line, sizeof line, "gauntlet:   %8lld x %10.3f ms  ", static_cast<long long>(k["count"].get<int64_t>()),
             static_cast<double>(k["total_ns"].get<int64_t>()) / 1e6);
    ctx.log->Append(line + k["family"].get<std::string>() + ": " + k["name"].get<std::string>().substr(0, 160) + "\n");
  }
  for (auto& p : rec.problems) ctx.log->Append("gauntlet:   kernel record problem: " + p + "\n");
  // Only a stage that passed is judged on its kernels: one that failed (a refusal, a crash) keeps
  // its own verdict, and what it launched before failing says nothing about the backend.
  if (!stage.contains("dispatch") || out->verdict != Verdict::kPassed) return;
  const DispatchCheck c = JudgeDispatch(stage["dispatch"], ctx.config, rec);
  if (c.kind == DispatchCheck::Kind::kNone) return;
  out->summary["dispatch"] = DispatchCheckJson(c);
  const std::string expect = Expectation(c);
  switch (c.kind) {
    case DispatchCheck::Kind::kVerified:
      ctx.log->Append("gauntlet: dispatch verified: " + expect + ": " + c.matched.substr(0, 200) + "\n");
      break;
    case DispatchCheck::Kind::kUnverified:
      ctx.log->Append("gauntlet: dispatch unverified: " + expect + ": " + c.reason + "\n");
      break;
    case DispatchCheck::Kind::kFallback: {
      const std::string ev = "dispatch: " + expect + "; none of the " + std::to_string(rec.kernels.size()) +
                             " kernels recorded matched; the run was carried by " + c.family;
      ctx.log->Append("gauntlet: " + ev + "\n");
      out->verdict = Verdict::kFallback;
      out->signature = "fallback:" + c.family;
      out->evidence = ev;
      out->basis = Basis::kKernelRecord;
      break;
    }
    case DispatchCheck::Kind::kNone: break;
  }
}

}  // namespace gauntlet::worker
