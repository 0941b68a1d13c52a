#include "workers/fingerprint.h"

#include "core/suite.h"

namespace gauntlet {
using proc::ProcessSpec;
using nlohmann::json;

namespace {

// Runs the fingerprint command; what it printed, as JSON when it printed an object.
json RunFingerprint(const TrialContext& ctx, const json& cmd) {
  ProcessSpec spec;
  auto vars = StageVars(ctx, 0);
  for (auto& a : cmd["argv"]) spec.argv.push_back(Substitute(a.get<std::string>(), vars));
  spec.env = StageEnv(ctx, cmd, 0, ctx.workdir + "/fingerprint.result.json");
  spec.cwd = ctx.workdir;
  auto p = ctx.processes->Start(spec);
  if (!p.ok()) return {{"error", p.status().message()}};
  std::string out;
  auto ex = (*p)->Run(
      ctx.clock->Now() + std::chrono::seconds(60),
      [&](std::string_view c) {
        if (out.size() < 65536) out.append(c);
      },
      nullptr, std::chrono::seconds(2), std::chrono::milliseconds(100));
  json fp = json::parse(out, nullptr, false);
  if (!fp.is_object()) {
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    fp = {{"output", out}};
  }
  if (ex.exit_code.value_or(1) != 0) fp["exit_code"] = ex.exit_code ? json(*ex.exit_code) : json();
  return fp;
}

}  // namespace

json FingerprintCache::Get(const TrialContext& ctx) {
  const json& def = ctx.suite;
  if (!def.contains("fingerprint") || !def["fingerprint"].contains("argv")) return json::object();
  const std::string key = def.value("name", "") + "@" + std::to_string(def.value("version", 1)) + "@" + ctx.suite_dir;
  {
    std::lock_guard lock(mu_);
    auto it = by_suite_.find(key);
    if (it != by_suite_.end()) return it->second;
  }
  json fp = RunFingerprint(ctx, def["fingerprint"]);  // outside the lock: other suites' trials go on
  std::lock_guard lock(mu_);
  by_suite_[key] = fp;
  return fp;
}

}  // namespace gauntlet
