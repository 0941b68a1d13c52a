#include "daemon/suite_loader.h"

#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "core/bundle.h"
#include "core/suite.h"
#include "core/yaml_json.h"

namespace gauntlet::daemon {
namespace fs = std::filesystem;

Result<std::vector<LoadedSuite>> LoadSuitesDir(const std::string& dir, store::Store& store) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("suites folder " + dir + " does not exist");
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    auto ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".json" || ext == ".yaml" || ext == ".yml")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::pair<fs::path, nlohmann::json>> parsed;
  std::vector<LoadedSuite> out;
  for (auto& f : files) {
    auto j = ReadJsonOrYaml(f.string());
    if (!j.ok()) {
      out.push_back({f.filename().string(), "", 0, false, false, j.status().message()});
      continue;
    }
    auto s = ParseSuite(*j);
    if (!s.ok()) {
      out.push_back({f.filename().string(), "", 0, false, false,
                     f.string() + ": " + s.status().field() + ": " + s.status().message()});
      continue;
    }
    parsed.emplace_back(f, *j);
  }
  const std::string abs = fs::absolute(dir).lexically_normal().string();
  // The folder's files travel to the workers as one bundle, shared by every suite of the folder. A
  // folder over the limit still loads: its suites keep {suite_dir} = this path, which only a
  // worker with the same folder at the same path can use, and the log says so.
  std::string bundle;
  if (auto packed = PackFolder(dir); !packed.ok()) {
    spdlog::warn("suites folder {}: its files are not sent to workers: {}", dir, packed.status().message());
  } else if (!parsed.empty()) {
    bundle = BundleSha256(packed->bytes);
    if (Status s = store.PutBundle(bundle, packed->bytes, packed->files); !s.ok()) return s;
    for (auto& why : packed->skipped) spdlog::info("suites folder {}: left out of the bundle: {}", dir, why);
  }
  for (auto& [f, j] : parsed) {
    // A suite registered through the API owns its name: a file of that name (the daemon's defaults,
    // an old copy) must not replace it at the next start. Say so in the log and on the suite.
    if (auto latest = store.GetSuite(j["name"]); latest.ok() && latest->source_dir.empty()) {
      const bool same = latest->definition == j;
      const std::string note = same ? "" : f.string() + " differs and was not loaded: the version registered through the API wins";
      if (!same) spdlog::warn("suite {}: {}", latest->name, note);
      if (Status s = store.NoteShadowed(latest->id, note); !s.ok()) return s;
      out.push_back({f.filename().string(), latest->name, latest->version, false, !same});
      continue;
    }
    bool created = false;
    auto row = store.PutSuite(j["name"], j, abs, &created, DeclaredKeysInFile(f.string(), "parameters"), bundle);
    if (!row.ok()) return row.status();
    out.push_back({f.filename().string(), row->name, row->version, created});
  }
  return out;
}

}  // namespace gauntlet::daemon
