#include "core/hardware.h"

#include "core/field_limits.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>

namespace gauntlet {
using nlohmann::json;

std::string Gpu::Arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }

Result<Inventory> ParseInventory(const json& j) {
  Inventory inv;
  if (!j.is_object()) return Status::Invalid("inventory is an object", "inventory");
  if (j.contains("gpus")) {
    if (!j["gpus"].is_array()) return Status::Invalid("gpus is a list", "gpus");
    for (size_t i = 0; i < j["gpus"].size(); ++i) {
      const json& g = j["gpus"][i];
      std::string f = "gpus[" + std::to_string(i) + "]";
      if (!g.is_object()) return Status::Invalid("a GPU is an object", f);
      Gpu gpu;
      // Numbers are range-checked before they are converted: a double past an integer's range
      // (memory_mb 1e300) is undefined behaviour in the conversion (found by tests/fuzz/).
      if (g.contains("index") && !(g["index"].is_number_integer() && g["index"].get<int64_t>() >= 0 &&
                                   g["index"].get<int64_t>() < 1024))
        return Status::Invalid("index is an integer from 0 to 1023", f + ".index");
      gpu.index = g.value("index", static_cast<int>(i));
      gpu.name = g.value("name", "");
      gpu.uuid = g.value("uuid", "");
      if (gpu.name.empty()) return Status::Invalid("name is required", f + ".name");
      std::string cc = g.value("compute_capability", "");
      auto dot = cc.find('.');
      try {
        if (dot == std::string::npos) throw std::invalid_argument(cc);
        gpu.cc_major = std::stoi(cc.substr(0, dot));
        gpu.cc_minor = std::stoi(cc.substr(dot + 1));
      } catch (const std::exception&) {
        return Status::Invalid("compute_capability is written like \"9.0\"", f + ".compute_capability");
      }
      if (g.contains("memory_mb") &&
          !(g["memory_mb"].is_number() && g["memory_mb"].get<double>() >= 0 && g["memory_mb"].get<double>() <= 1e12))
        return Status::Invalid("memory_mb is a number from 0 to 10^12", f + ".memory_mb");
      gpu.memory_mb = g.value("memory_mb", int64_t{0});
      inv.gpus.push_back(std::move(gpu));
    }
  }
  if (j.contains("labels")) {
    if (!j["labels"].is_object()) return Status::Invalid("labels is an object", "labels");
    if (Status s = CheckLabels(j["labels"], "labels"); !s.ok()) return s;
    for (auto& [k, v] : j["labels"].items()) inv.labels[k] = v.get<std::string>();
  }
  inv.driver = j.value("driver", "");
  inv.cuda = j.value("cuda", "");
  return inv;
}

Status CheckLabels(const json& labels, const std::string& field) {
  if (!labels.is_object()) return Status::Invalid("labels is an object of strings", field);
  if (labels.size() > limits::kLabels)
    return Status::Invalid("at most " + std::to_string(limits::kLabels) + " labels", field);
  for (auto& [k, v] : labels.items()) {
    if (k.size() > limits::kLabelKeyBytes)
      return Status::Invalid("a label's name is at most " + std::to_string(limits::kLabelKeyBytes) + " bytes",
                             field + "." + k.substr(0, 64));
    if (!v.is_string()) return Status::Invalid("label values are strings", field + "." + k);
    if (v.get_ref<const std::string&>().size() > limits::kLabelValueBytes)
      return Status::Invalid("a label's value is at most " + std::to_string(limits::kLabelValueBytes) + " bytes",
                             field + "." + k);
  }
  return Status::Ok();
}

json InventoryJson(const Inventory& inv) {
  json gpus = json::array();
  for (auto& g : inv.gpus)
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"uuid", g.uuid},
                    {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                    {"memory_mb", g.memory_mb}});
  return {{"gpus", gpus}, {"labels", inv.labels}, {"driver", inv.driver}, {"cuda", inv.cuda}};
}

Need MakeNeed(const Requirements& suite, const Requirements& target, const std::string& glob) {
  Need n;
  n.gpus = target.gpus > 0 ? target.gpus : suite.gpus;
  n.arch = !target.arch.empty() ? target.arch : suite.arch;
  if (!target.arch.empty() && !suite.arch.empty()) {
    // Both constrain: the target narrows the suite's list.
    n.arch.clear();
    for (auto& a : target.arch)
      if (std::find(suite.arch.begin(), suite.arch.end(), a) != suite.arch.end()) n.arch.push_back(a);
    if (n.arch.empty()) n.arch = {"sm_none"};  // a target outside the suite's archs matches nothing
  }
  n.min_memory_gb = std::max(suite.min_memory_gb, target.min_memory_gb);
  n.labels = suite.labels;
  for (auto& [k, v] : target.labels) n.labels[k] = v;
  n.gpu_name = glob;
  if ((!n.arch.empty() || !glob.empty()) && n.gpus == 0) n.gpus = 1;  // asking for a GPU kind implies one GPU
  return n;
}

namespace {
// "sm_90a" and "sm_90" both name compute capability 9.0; the suffix is a build target detail.
std::string StripSuffix(const std::string& a) {
  if (!a.empty() && (a.back() == 'a' || a.back() == 'f')) return a.substr(0, a.size() - 1);
  return a;
}
}  // namespace

bool GpuFits(const Gpu& g, const Need& need) {
  if (!need.arch.empty()) {
    bool ok = false;
    for (auto& a : need.arch) ok = ok || StripSuffix(a) == g.Arch();
    if (!ok) return false;
  }
  if (need.min_memory_gb > 0 && static_cast<double>(g.memory_mb) < need.min_memory_gb * 1024 * 0.97) return false;
  if (!need.gpu_name.empty() && fnmatch(need.gpu_name.c_str(), g.name.c_str(), FNM_CASEFOLD) != 0) return false;
  return true;
}

bool LabelsFit(const std::map<std::string, std::string>& labels, const Need& need) {
  for (auto& [k, v] : need.labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

std::optional<std::vector<int>> PickGpus(const Inventory& inv, const std::vector<int>& free, const Need& need) {
  if (!LabelsFit(inv.labels, need)) return std::nullopt;
  std::vector<int> pick;
  if (need.gpus == 0) return pick;
  // GPUs of one model only: a trial on mixed GPUs would be filed under no single hardware class.
  std::map<std::string, std::vector<int>> by_model;
  for (auto& g : inv.gpus)
    if (std::find(free.begin(), free.end(), g.index) != free.end() && GpuFits(g, need))
      by_model[g.name].push_back(g.index);
  for (auto& [model, idx] : by_model)
    if (static_cast<int>(idx.size()) >= need.gpus) return std::vector<int>(idx.begin(), idx.begin() + need.gpus);
  return std::nullopt;
}

bool CouldEverFit(const Inventory& inv, const Need& need) {
  std::vector<int> all;
  for (auto& g : inv.gpus) all.push_back(g.index);
  return PickGpus(inv, all, need).has_value();
}

std::string HardwareClass(const Inventory& inv, const std::vector<int>& gpus) {
  if (gpus.empty()) return "cpu";
  for (auto& g : inv.gpus)
    if (g.index == gpus[0]) return g.name + " · " + g.Arch() + " · x" + std::to_string(gpus.size());
  return "unknown";
}

std::string NodeHardware(const Inventory& inv) {
  std::vector<int> all;
  for (auto& g : inv.gpus) all.push_back(g.index);
  return HardwareClass(inv, all);
}

std::optional<nlohmann::json> TargetForHardware(const std::string& hw) {
  if (hw == "cpu") return nlohmann::json::object();
  static const std::string kSep = " · ";
  const size_t b = hw.rfind(kSep);
  if (b == std::string::npos || b == 0) return std::nullopt;
  const size_t a = hw.rfind(kSep, b - 1);
  if (a == std::string::npos || a == 0) return std::nullopt;
  const std::string name = hw.substr(0, a), arch = hw.substr(a + kSep.size(), b - a - kSep.size());
  const std::string count = hw.substr(b + kSep.size());
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 4 || count.size() < 2 || count.size() > 3 || count[0] != 'x') return std::nullopt;
  for (size_t i = 1; i < count.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(count[i]))) return std::nullopt;
  // A GPU name glob: the name's own glob characters would match other models too.
  if (name.find_first_of("*?[\\") != std::string::npos) return std::nullopt;
  return nlohmann::json{{"gpu_name", name}, {"arch", arch}, {"gpus", std::stoi(count.substr(1))}};
}

std::string DescribeNeed(const Need& n) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "requires." : ", ") + part; };
  if (n.gpus > 0) add("gpus: " + std::to_string(n.gpus));
  if (!n.arch.empty()) {
    std::string a;
    for (auto& x : n.arch) a += (a.empty() ? "" : "|") + x;
    add("arch: " + a);
  }
  if (!n.gpu_name.empty()) add("gpu_name: " + n.gpu_name);
  if (n.min_memory_gb > 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", n.min_memory_gb);
    add(std::string("min_memory_gb: ") + buf);
  }
  for (auto& [k, v] : n.labels) add("labels." + k + ": " + v);
  return out.empty() ? "requires nothing" : out;
}

}  // namespace gauntlet
