#include "workers/fingerprint.h"

#include "core/suite.h"

namespace gauntlet::worker {
using proc::ProcessSpec;
using nlohmann::json;

namespace {

// Runs the fingerprint command; what it printed, as JSON when it printed an object; Unavailable when
// it could not start, ran past its 60 s, exited non-zero or printed nothing.
Result<json> RunFingerprint(const TrialContext& ctx, const json& cmd) {
  ProcessSpec spec;
  auto vars = StageVars(ctx, 0);
  for (auto& a : cmd["argv"]) spec.argv.push_back(Substitute(a.get<std::string>(), vars));
  spec.env = StageEnv(ctx, cmd, 0, ctx.workdir + "/fingerprint.result.json");
  spec.cwd = ctx.workdir;
  auto p = ctx.processes->Start(spec);
  if (!p.ok()) return Status(Code::kUnavailable, "the suite's fingerprint command could not start: " + p.status().message());
  std::string out;
  auto ex = (*p)->Run(
      ctx.clock->Now() + std::chrono::seconds(60),
      [&](std::string_view c) {
        if (out.size() < 65536) out.append(c);
      },
      nullptr, std::chrono::seconds(2), std::chrono::milliseconds(100));
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\r')) out.pop_back();
  if (ex.exit_code.value_or(1) != 0) {
    const std::string how = ex.exit_code ? "exited " + std::to_string(*ex.exit_code) : "was killed or ran past 60 s";
    return Status(Code::kUnavailable, "the suite's fingerprint command " + how +
                               (out.empty() ? "" : ": " + out.substr(out.size() > 300 ? out.size() - 300 : 0)));
  }
  json fp = json::parse(out, nullptr, false);
  if (fp.is_object()) return fp;
  if (out.empty()) return Status(Code::kUnavailable, "the suite's fingerprint command printed nothing");
  return json{{"output", out}};
}

}  // namespace

Result<json> FingerprintCache::Get(const TrialContext& ctx) {
  const json& def = ctx.suite;
  if (!def.contains("fingerprint") || !def["fingerprint"].contains("argv")) return json::object();
  // Per suite version (and folder): a new version may fingerprint other software.
  const std::string key = def.value("name", "") + "@" + std::to_string(def.value("version", 1)) + "@" + ctx.suite_dir;
  {
    std::lock_guard lock(mu_);
    auto it = by_suite_.find(key);
    if (it != by_suite_.end()) return it->second;
  }
  auto fp = RunFingerprint(ctx, def["fingerprint"]);  // outside the lock: other suites' trials go on
  if (!fp.ok()) return fp.status();  // never kept: the next trial asks again
  std::lock_guard lock(mu_);
  by_suite_[key] = *fp;
  return *fp;
}

}  // namespace gauntlet::worker
