#include "workers/fingerprint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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
  RunAsTrialUser(ctx, &spec);  // the suite's own command: as much the trial's as its stages
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

// "path:mtime_ns;" for a path that exists, "" otherwise.
std::string Stamped(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return path + ":" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ";";
}

// The executable `name` names on `path_env` (a name with a '/' is itself), "" when none.
std::string Resolve(const std::string& name, const std::string& path_env) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (name.find('/') != std::string::npos) return fs::exists(name, ec) ? name : "";
  std::stringstream dirs(path_env);
  for (std::string d; std::getline(dirs, d, ':');) {
    if (d.empty()) continue;
    const fs::path p = fs::path(d) / name;
    if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

}  // namespace

std::string SoftwareStamp(const TrialContext& ctx, const json& command) {
  namespace fs = std::filesystem;
  std::string out = Stamped("/var/lib/dpkg/status") + Stamped("/var/lib/rpm/rpmdb.sqlite") + Stamped("/var/lib/rpm/Packages");
  {
    std::ifstream v("/proc/driver/nvidia/version");
    std::string line;
    if (std::getline(v, line)) out += "driver:" + line + ";";
  }
  if (!command.contains("argv") || !command["argv"].is_array() || command["argv"].empty() ||
      !command["argv"][0].is_string())
    return out;
  // The interpreter's install prefix: <prefix>/bin/python3 (a venv's too) keeps its packages in
  // <prefix>/lib/python3.X/site-packages (dist-packages on Debian; sysconfig's purelib/platlib).
  const auto env = StageEnv(ctx, command, 0, "");
  const auto path = env.find("PATH");
  const std::string exe = Resolve(command["argv"][0].get<std::string>(), path == env.end() ? "" : path->second);
  if (exe.empty()) return out;
  std::error_code ec;
  const fs::path real = fs::canonical(exe, ec);
  if (ec) return out;
  // An interpreter named by its version ("python3.11", what /usr/bin/python3 and a venv's python
  // resolve to) has its folders named too: a few stat calls per trial. Otherwise the lib folders are
  // listed for python3.* (a directory walk, only for an interpreter named without its version).
  const std::string version = real.filename().string();
  const bool named = version.starts_with("python3.");
  for (const fs::path& prefix : {real.parent_path().parent_path(), fs::path(exe).parent_path().parent_path()}) {
    for (const char* lib : {"lib", "local/lib"}) {
      auto folders = [&](const fs::path& py) {
        out += Stamped((py / "site-packages").string()) + Stamped((py / "dist-packages").string());
      };
      if (named) {
        folders(prefix / lib / version);
        folders(prefix / lib / "python3");  // Debian's dist-packages for every python3
        continue;
      }
      fs::directory_iterator it(prefix / lib, ec), end;
      for (; !ec && it != end; it.increment(ec))
        if (it->path().filename().string().starts_with("python3")) folders(it->path());
      ec.clear();
    }
  }
  return out;
}

Result<json> FingerprintCache::Get(const TrialContext& ctx) {
  const json& def = ctx.suite;
  if (!def.contains("fingerprint") || !def["fingerprint"].contains("argv")) return json::object();
  // Per suite version (and folder): a new version may fingerprint other software.
  const std::string key = def.value("name", "") + "@" + std::to_string(def.value("version", 1)) + "@" + ctx.suite_dir;
  const std::string stamp = stamp_ ? stamp_(ctx, def["fingerprint"]) : std::string();
  const auto now = ctx.clock->Now();
  {
    std::lock_guard lock(mu_);
    auto it = by_suite_.find(key);
    // Kept while the node's software looks the same and it is young enough.
    if (it != by_suite_.end() && it->second.stamp == stamp && now - it->second.taken < kFingerprintMaxAge)
      return it->second.fingerprint;
  }
  auto fp = RunFingerprint(ctx, def["fingerprint"]);  // outside the lock: other suites' trials go on
  if (!fp.ok()) return fp.status();  // never kept: the next trial asks again
  std::lock_guard lock(mu_);
  by_suite_[key] = Kept{*fp, stamp, now};
  return *fp;
}

}  // namespace gauntlet::worker
