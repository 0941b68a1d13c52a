#include "workers/node_checks.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>

#include "core/yaml_json.h"
#include "workers/nvml.h"

namespace gauntlet::worker {

bool LoadInventory(const WorkerOptions& o, Inventory* inv, std::string* note) {
  if (o.inventory_file.empty()) {
    *inv = DiscoverInventory(note);
  } else {
    auto j = ReadJsonOrYaml(o.inventory_file);
    if (!j.ok()) {
      spdlog::error("--inventory: {}", j.status().message());
      return false;
    }
    auto parsed = ParseInventory(*j);
    if (!parsed.ok()) {
      spdlog::error("--inventory {}: {}: {}", o.inventory_file, parsed.status().field(), parsed.status().message());
      return false;
    }
    *inv = *parsed;
    *note = "inventory from " + o.inventory_file;
  }
  for (auto& [k, v] : o.labels) inv->labels[k] = v;
  return true;
}

std::string Preflight(const WorkerOptions& o, const Inventory& inv, const std::string& exe_dir,
                      proc::ProcessRunner& processes, WorkerClock& clock) {
  if (o.preflight == "off" || inv.gpus.empty()) return "";
  std::string prog = o.preflight == "auto" ? exe_dir + "/gauntlet-kernels" : o.preflight;
  if (o.preflight == "auto" && access(prog.c_str(), X_OK) != 0) return "";
  proc::ProcessSpec spec;
  spec.argv = {prog, "preflight"};
  const char* path = getenv("PATH");
  spec.env = {{"PATH", path ? path : "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  if (const char* ld = getenv("LD_LIBRARY_PATH")) spec.env["LD_LIBRARY_PATH"] = ld;
  auto p = processes.Start(spec);
  if (!p.ok()) return "preflight could not start: " + p.status().message();
  std::string out;
  auto e = (*p)->Run(
      clock.Now() + std::chrono::minutes(5),
      [&](std::string_view c) {
        if (out.size() < 65536) out.append(c);
      },
      nullptr, std::chrono::seconds(5), std::chrono::milliseconds(100));
  if (e.exit_code && *e.exit_code == 0) return "";
  // 5: the tool sees no GPU. With GPUs declared by --inventory (a test fleet) that is expected;
  // judging the node on it would quarantine every simulated GPU node.
  if (e.exit_code && *e.exit_code == 5 && !o.inventory_file.empty()) return "";
  std::string last = out.substr(out.rfind('\n', out.size() > 1 ? out.size() - 2 : 0) + 1);
  return "preflight failed (" + (e.exit_code ? "exit " + std::to_string(*e.exit_code) : "signal") + "): " +
         last.substr(0, 300);
}

}  // namespace gauntlet::worker
