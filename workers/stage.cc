#include "workers/stage.h"

#include <filesystem>

#include "core/verdict.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "core/stage_limits.h"
#include "core/suite.h"
#include "workers/kernel_recording.h"
#include "proc/stage_cgroup.h"
#include "workers/result_file.h"

namespace gauntlet::worker {
using nlohmann::json;

namespace {
std::string GpuList(const std::vector<int>& g) {
  std::string s;
  for (int x : g) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}
std::string Upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

std::map<std::string, std::string> StageVars(const TrialContext& ctx, int port) {
  std::map<std::string, std::string> v = ctx.config;
  v["port"] = std::to_string(port);
  v["suite_dir"] = ctx.suite_dir;
  v["workdir"] = ctx.workdir;
  v["trial_id"] = std::to_string(ctx.trial);
  v["gpus"] = GpuList(ctx.gpus);
  v["node"] = ctx.node_name;
  return v;
}

std::map<std::string, std::string> StageEnv(const TrialContext& ctx, const json& stage, int port,
                                            const std::string& result_file) {
  std::map<std::string, std::string> env;
  // PATH: the worker's own folder first (gauntlet-kernels), then the worker's PATH or a default.
  const char* path = getenv("PATH");
  env["PATH"] = (ctx.exe_dir.empty() ? "" : ctx.exe_dir + ":") +
                (path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  env["HOME"] = ctx.workdir;
  // A trial's user has no account: programs that ask for a user name (Python's getpass.getuser(),
  // behind PyTorch's and Triton's cache folders) find it here before they look in /etc/passwd,
  // where they would fail.
  if (ctx.user) env["USER"] = env["LOGNAME"] = "gauntlet-trial-" + std::to_string(ctx.user->uid);
  env["LANG"] = "C.UTF-8";
  env["PYTHONUNBUFFERED"] = "1";
  for (const char* k : {"LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_HOME", "TMPDIR", "HF_HOME", "TRANSFORMERS_CACHE"})
    if (const char* v = getenv(k)) env[k] = v;
  // The fleet's token never enters a stage, even when --pass-env names it: a stage that could read
  // it could register a node of its own and report any verdict (docs/DECISIONS.md "A stage is not
  // the worker").
  for (auto& k : ctx.pass_env)
    if (k != "GAUNTLET_TOKEN")
      if (const char* v = getenv(k.c_str())) env[k] = v;
  std::string arch;
  std::string gpu_name;
  if (ctx.inv && !ctx.gpus.empty())
    for (auto& g : ctx.inv->gpus)
      if (g.index == ctx.gpus[0]) {
        arch = g.Arch();
        gpu_name = g.name;
      }
  env["CUDA_VISIBLE_DEVICES"] = GpuList(ctx.gpus);
  env["GAUNTLET_TRIAL_ID"] = std::to_string(ctx.trial);
  env["GAUNTLET_PORT"] = std::to_string(port);
  env["GAUNTLET_WORKDIR"] = ctx.workdir;
  env["GAUNTLET_RESULT_FILE"] = result_file;
  env["GAUNTLET_NODE"] = ctx.node_name;
  env["GAUNTLET_GPU_NAME"] = gpu_name;
  env["GAUNTLET_GPU_ARCH"] = arch;
  env["GAUNTLET_SUITE_DIR"] = ctx.suite_dir;
  for (auto& [k, v] : ctx.config) env["GAUNTLET_PARAM_" + Upper(k)] = v;
  AddKernelRecorderEnv(ctx, stage, &env);
  if (stage.contains("env") && stage["env"].is_object()) {
    auto vars = StageVars(ctx, port);
    for (auto& [k, v] : stage["env"].items())
      if (v.is_string()) env[k] = Substitute(v.get<std::string>(), vars);
  }
  return env;
}

void SetStageLimits(const TrialContext& ctx, const json& stage, proc::ProcessSpec* spec) {
  const StageLimits l = LimitsOf(ctx.suite, stage);
  const proc::DefaultLimits d = proc::DefaultStageLimits();
  spec->memory_limit_bytes = l.memory_mb > 0 ? l.memory_mb << 20 : d.memory_bytes;
  spec->pids_limit = l.pids > 0 ? l.pids : d.pids;
  spec->limits_declared = l.memory_mb > 0 || l.pids > 0;
}

namespace {
constexpr const char* kNoLimitsWhy =
    "this node's stage cgroups cannot hold them: no memory or pids controller the worker may use, in cgroup v2 "
    "(delegated to it) or v1";
}  // namespace

std::string UnenforcedLimits(const TrialContext& ctx, const json& stage, const proc::ExitInfoProc& exit) {
  const StageLimits l = LimitsOf(ctx.suite, stage);
  std::string missing;
  if (l.memory_mb > 0 && exit.memory_limit_bytes == 0) missing = "memory_mb " + std::to_string(l.memory_mb);
  if (l.pids > 0 && exit.pids_limit == 0) missing += (missing.empty() ? "" : ", ") + std::string("pids ") + std::to_string(l.pids);
  return missing;
}

void NoteUnenforcedLimits(const TrialContext& ctx, const json& stage, const proc::ExitInfoProc& exit, StageOutcome* out) {
  const std::string missing = UnenforcedLimits(ctx, stage, exit);
  if (missing.empty()) return;
  const std::string note = "not enforced: " + missing + " (" + kNoLimitsWhy + ")";
  out->summary["limits"] = note;
  ctx.log->Append("gauntlet: limits " + note + "\n");
}

std::optional<StageOutcome> RefuseForLimits(const TrialContext& ctx, const json& stage) {
  if (!ctx.require_limits || ctx.limits_enforced) return std::nullopt;
  const StageLimits l = LimitsOf(ctx.suite, stage);
  if (l.memory_mb <= 0 && l.pids <= 0) return std::nullopt;
  StageOutcome o;
  o.stage = stage.value("name", "");
  o.verdict = Verdict::kInfraError;
  o.signature = "infra_error:limits_not_enforced";
  o.basis = Basis::kWorker;
  o.evidence = "--require-limits: the stage declares limits (" +
               std::string(l.memory_mb > 0 ? "memory_mb " + std::to_string(l.memory_mb) : "") +
               (l.memory_mb > 0 && l.pids > 0 ? ", " : "") + (l.pids > 0 ? "pids " + std::to_string(l.pids) : "") +
               ") that " + kNoLimitsWhy;
  return o;
}

void RunAsTrialUser(const TrialContext& ctx, proc::ProcessSpec* spec) {
  if (!ctx.user) return;
  spec->uid = ctx.user->uid;
  spec->gid = ctx.user->gid;
  spec->view = ctx.view;
}

void SettleNotStarted(const TrialContext& ctx, const Status& st, const std::string& program, StageOutcome* out) {
  out->verdict = Verdict::kInfraError;
  out->basis = Basis::kWorker;
  const std::string name = std::filesystem::path(program).filename().string();
  out->signature = st.code() == Code::kNotFound && !name.empty() ? "infra_error:program_not_found:" + name
                                                                  : "infra_error:stage_not_started";
  out->evidence = st.message() + (st.code() == Code::kNotFound ? " on this node" : "");
  ctx.log->Append("gauntlet: " + out->evidence + "\n");
}

void JudgeLimits(const proc::ExitInfoProc& exit, const proc::ProcessSpec& spec, StageOutcome* out) {
  if (exit.timed_out || exit.stopped) return;
  const int64_t limit = exit.memory_limit_bytes > 0 ? exit.memory_limit_bytes : spec.memory_limit_bytes;
  if (exit.oom_killed) {
    out->verdict = Verdict::kOom;
    out->signature = "oom:memory_limit";
    out->basis = Basis::kWorker;
    out->evidence = "the kernel killed the stage for memory at its limit of " + std::to_string(limit >> 20) +
                    " MiB (limits.memory_mb)" + (out->evidence.empty() ? "" : "; " + out->evidence);
    return;
  }
  if (exit.pids_limited && out->verdict != Verdict::kPassed)
    out->evidence = "a fork was refused at the stage's limit of " + std::to_string(exit.pids_limit) +
                    " processes (limits.pids)" + (out->evidence.empty() ? "" : "; " + out->evidence);
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  int port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

namespace {
void MergeMetrics(const json& m, StageOutcome* out) {
  if (!m.is_object()) return;
  for (auto& [k, v] : m.items()) {
    if (v.is_number()) out->metrics[k] = {{"value", v}};
    else if (v.is_object() && v.contains("value") && v["value"].is_number()) out->metrics[k] = v;
  }
}
}  // namespace

std::string ReadMetrics(const std::string& result_file, const std::string& last_json_line, StageOutcome* out,
                        std::optional<Verdict>* file_verdict, std::string* file_detail, const std::string& workdir,
                        std::optional<uid_t> owner) {
  // The stage wrote the file, so it may be a link, a FIFO or a huge sparse file: read it only as a
  // bounded regular file inside the workdir (workers/result_file.h), else the stage fails with why.
  const size_t slash = result_file.find_last_of('/');
  const std::string dir = !workdir.empty() ? workdir : slash == std::string::npos ? "." : result_file.substr(0, slash);
  auto file = ReadResultFile(result_file, dir, owner);
  if (!file.ok()) return file.status().message();
  if (*file) {
    // nlohmann::json refuses invalid UTF-8 as it refuses bad syntax: both are a broken file.
    json j = json::parse(**file, nullptr, false);
    if (j.is_discarded()) return "GAUNTLET_RESULT_FILE is not valid JSON (or not UTF-8)";
    if (!j.is_object()) return "GAUNTLET_RESULT_FILE holds " + std::string(j.type_name()) + ", not a JSON object";
    if (j.contains("verdict")) {
      if (!j["verdict"].is_string()) return "GAUNTLET_RESULT_FILE's verdict is not a string";
      const std::string v = j["verdict"].get<std::string>();
      const std::optional<Verdict> known = ParseVerdict(v);
      if (!known || !Info(*known).rule)
        return "GAUNTLET_RESULT_FILE's verdict '" + v.substr(0, 64) + "' is not one of " +
               JoinNames(VerdictNames([](const VerdictInfo& i) { return i.rule; }));
      *file_verdict = *known;
    }
    MergeMetrics(j.value("metrics", json::object()), out);
    if (j.contains("detail") && j["detail"].is_string()) *file_detail = j["detail"].get<std::string>();
    if (j.contains("signature") && j["signature"].is_string()) out->signature = j["signature"].get<std::string>();
    return "";
  }
  if (!last_json_line.empty()) {
    json j = json::parse(last_json_line, nullptr, false);
    if (j.is_object() && j.contains("metrics")) {
      MergeMetrics(j["metrics"], out);
      if (j.contains("verdict") && j["verdict"].is_string()) *file_verdict = ParseVerdict(j["verdict"].get<std::string>());
      if (j.contains("detail") && j["detail"].is_string()) *file_detail = j["detail"].get<std::string>();
    }
  }
  return "";
}

}  // namespace gauntlet::worker
