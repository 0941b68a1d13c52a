#include "api/matrix_markdown.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/hardware.h"
#include "core/json_text.h"
#include "core/matrix_cells.h"

namespace gauntlet::api {
using nlohmann::json;

namespace {

std::string Text(const json& v) { return JsonText(v); }

// One Markdown table cell: '|' escaped, line breaks as spaces.
std::string MdCell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : (c == '\n' || c == '\r') ? std::string(" ") : std::string(1, c);
  return out;
}

// "`a`": inline code that survives a backtick in the text (a longer fence around it).
std::string Code(const std::string& s) {
  const std::string fence = s.find('`') == std::string::npos ? "`" : "``";
  return fence + (fence.size() > 1 ? " " + s + " " : s) + fence;
}

std::string Title(const json& m) {
  std::string t = "**" + Text(m["suite"]) + "**";
  const json& v = m["suite_version"];
  if (v.is_number()) t += " v" + v.dump();
  else if (v == "all") t += " · all versions";
  t += m["sweep"].is_number() ? " · sweep " + m["sweep"].dump() : " · latest verdicts";
  if (m["key_metric"].is_string()) t += " · metric " + m["key_metric"].get<std::string>();
  return t;
}

// What one node adds to its class's name: the GPU model's memory and the driver and CUDA versions
// ("140 GiB, driver 580.159.04, CUDA 13.0"); "no GPU" for the cpu class.
std::string NodeDetail(const std::string& hardware, const store::NodeRow& node) {
  auto inv = ParseInventory(node.inventory);
  std::string out;
  const auto target = TargetForHardware(hardware);
  if (hardware == "cpu") out = "no GPU";
  else if (inv.ok() && target)
    for (const Gpu& g : inv->gpus)
      if (g.name == (*target)["gpu_name"].get<std::string>() && g.memory_mb > 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.0f GiB", std::round(static_cast<double>(g.memory_mb) / 1024));
        out = buf;
        break;
      }
  if (inv.ok() && hardware != "cpu") {
    if (!inv->driver.empty()) out += (out.empty() ? "" : ", ") + std::string("driver ") + inv->driver;
    if (!inv->cuda.empty()) out += (out.empty() ? "" : ", ") + std::string("CUDA ") + inv->cuda;
  }
  return out.empty() ? "no details declared" : out;
}

// "- `NVIDIA H200 · sm_90 · x1`: 140 GiB, driver 580.159.04, CUDA 13.0 on `h200-a`, `h200-b`": nodes
// alike grouped, so a fleet of one build reads as one line.
std::string HardwareLine(const std::string& hardware, const NodesByClass& nodes) {
  std::string line = "- " + Code(hardware) + ": ";
  auto it = nodes.find(hardware);
  if (it == nodes.end() || it->second.empty()) return line + "no node on record ran it";
  std::vector<std::pair<std::string, std::string>> groups;  // detail -> node names, first seen first
  for (const store::NodeRow& n : it->second) {
    const std::string d = NodeDetail(hardware, n);
    auto g = std::find_if(groups.begin(), groups.end(), [&](auto& e) { return e.first == d; });
    if (g == groups.end()) groups.emplace_back(d, Code(n.name));
    else g->second += ", " + Code(n.name);
  }
  std::string parts;
  for (auto& [d, names] : groups) parts += (parts.empty() ? "" : "; ") + d + " on " + names;
  return line + parts;
}

// "Software fingerprint: `{...}`", or each of several with how many results it judged.
std::string FingerprintLine(const json& m) {
  std::vector<std::pair<std::string, int64_t>> fps;
  for (auto& f : m.value("fingerprints", json::array())) {
    std::string fp = Text(f["fingerprint"]);
    fps.emplace_back(fp.empty() || fp == "{}" ? "" : fp, f["results"].get<int64_t>());
  }
  if (fps.empty()) return "Software fingerprint: no results yet";
  if (fps.size() == 1)
    return fps[0].first.empty() ? "Software fingerprint: none recorded (the suite reports no fingerprint)"
                                : "Software fingerprint: " + Code(fps[0].first);
  std::string out = "Software fingerprints:";
  for (auto& [fp, n] : fps)
    out += "\n- " + (fp.empty() ? std::string("none recorded") : Code(fp)) + " (" + std::to_string(n) +
           (n == 1 ? " result)" : " results)");
  return out;
}

}  // namespace

void AddCellReasons(const json& suite, json* m) {
  std::vector<std::string> stages;
  for (auto& st : suite.value("stages", json::array()))
    if (st.is_object() && st.contains("name") && st["name"].is_string()) stages.push_back(st["name"]);
  for (auto& c : (*m)["cells"]) {
    const std::string r = CellReason(c, &stages);
    c["reason"] = r.empty() ? json() : json(r);
  }
}

std::string MatrixMarkdown(const json& m, const NodesByClass& nodes) {
  std::string out = Title(m) + "\n\nHardware:\n";
  for (auto& hw : m.value("hardware", json::array())) out += HardwareLine(Text(hw), nodes) + "\n";
  out += "\n" + FingerprintLine(m) + "\n\n";
  std::string head = "|", sep = "|";
  for (auto& r : m["rows"]) head += " " + MdCell(Text(r)) + " |", sep += "---|";
  for (auto& col : m["col_keys"]) head += " " + MdCell(Text(col)) + " |", sep += "---|";
  out += head + "\n" + sep + "\n";
  std::map<std::pair<json, std::string>, const json*> at;
  for (auto& cell : m["cells"]) at[{cell["row"], Text(cell["col"])}] = &cell;
  for (auto& rk : m["row_keys"]) {
    std::string line = "|";
    // Every key kept (a pasted table is sorted and cut by hand), in backticks.
    for (auto& k : rk) line += " " + (Text(k).empty() ? std::string() : Code(MdCell(Text(k)))) + " |";
    for (auto& col : m["col_keys"]) {
      auto it = at.find({rk, Text(col)});
      const std::string text = it == at.end() ? "" : CellText(*it->second) + LayerText(*it->second);
      line += " " + MdCell(text) + " |";
    }
    out += line + "\n";
  }
  const auto lines = Disagreements(m, "`");
  if (!lines.empty()) {
    out += "\nMixed and flaky cells:\n\n";
    for (auto& l : lines) out += "- " + l + "\n";
  }
  return out;
}

}  // namespace gauntlet::api
