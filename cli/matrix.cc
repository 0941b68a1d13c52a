// `gauntlet matrix`: the pivot of GET /api/v1/matrix as a terminal table (coloured by verdict), CSV,
// JSON, or a Markdown table ready to paste into an issue, like the bring-up tables people write by
// hand ("✅ 2100 tok/s", "❌ crashed: Error Internal", "⚠ unsupported").
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <regex>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/verdict.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

// By the verdict's family (core/verdict.h), so a new verdict gets an icon without an edit here; an
// unknown name reads as bad. Within infra a timeout gets its own, since "too slow" asks for a
// different fix than a broken node.
std::string Icon(const std::string& v) {
  const VerdictInfo* info = FindVerdict(v);
  const std::string_view family = info ? info->family : "bad";
  if (family == "ok") return "✅";
  if (family == "warn") return "⚠";
  if (family == "infra") return v == "timeout" ? "⏳" : "🔧";
  if (family == "none") return "·";
  return "❌";
}

// "2100 tok/s", "45.2 ms", "0.873 TFLOP/s": as many digits as a person reads.
std::string MetricText(const json& m) {
  if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) return "";
  double v = m["value"].get<double>();
  char buf[64];
  if (std::fabs(v) >= 100) snprintf(buf, sizeof buf, "%.0f", v);
  else if (std::fabs(v) >= 10) snprintf(buf, sizeof buf, "%.1f", v);
  else snprintf(buf, sizeof buf, "%.3g", v);
  std::string unit = m.value("unit", "");
  return unit.empty() ? std::string(buf) : std::string(buf) + " " + unit;
}

// The short reason in a signature: "crashed:RuntimeError:Error Internal@modelopt_quant.py" -> "Error
// Internal"; "unsupported:no_kernel_image" -> "no_kernel_image". The full signature stays in JSON/CSV.
std::string ShortReason(const std::string& verdict, const std::string& signature) {
  std::string s = signature;
  if (s.rfind(verdict + ":", 0) == 0) s = s.substr(verdict.size() + 1);
  else if (s == verdict) s.clear();
  if (auto at = s.find('@'); at != std::string::npos) s = s.substr(0, at);
  static const std::regex kExceptionType("^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Warning)$");
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(':', i);
    if (j == std::string::npos) j = s.size();
    parts.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  // The exception's type says less than its message; keep the type only when there is no message.
  if (parts.size() > 1 && std::regex_match(parts[0], kExceptionType)) parts.erase(parts.begin());
  std::string out;
  for (auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : ": ") + p;
  if (out.size() > 40) {
    size_t cut = 39;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
    out = out.substr(0, cut) + "…";
  }
  return out;
}

// One cell as text: icon, verdict or metric, short reason; a pending cell shows its counts.
std::string CellText(const json& c) {
  if (c["verdict"].is_null()) {
    std::string pending;
    for (auto& [k, v] : c["counts"].items())
      pending += (pending.empty() ? "" : ", ") + v.dump() + " " + (k == "leased" ? "running" : k);
    return "… " + pending;
  }
  const std::string v = c["verdict"].get<std::string>();
  std::string t = Icon(v) + " ";
  if (v == "passed") {
    std::string m = MetricText(c["metric"]);
    t += m.empty() ? "passed" : m;
  } else {
    t += v;
    std::string r = ShortReason(v, c["signature"].is_string() ? c["signature"].get<std::string>() : "");
    if (!r.empty()) t += ": " + r;
  }
  // Repeats or history that disagree are worth seeing (a flaky config): "(passed 2, crashed 1)".
  int judged_kinds = 0;
  std::string mix;
  for (auto& name : Verdicts()) {
    if (VerdictSeverity(name) < 0) continue;  // says nothing about the config, so it is no disagreement
    int64_t n = c["counts"].value(name, int64_t{0});
    if (n > 0) {
      ++judged_kinds;
      mix += (mix.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
  }
  if (judged_kinds > 1) t += " (" + mix + ")";
  return t;
}

}  // namespace

void AddMatrixCommand(CLI::App& app, int* code) {
  struct Opts {
    Conn conn;
    std::string suite, rows, cols = "hardware", format = "table", fingerprint;
    int64_t sweep = 0;
  };
  auto o = std::make_shared<Opts>();
  auto c = app.add_subcommand("matrix", "Which configurations pass on which hardware: the results pivot");
  c->footer("Cells: ✅ key metric when passed, ❌/⚠/⏳ verdict with a short reason, … pending counts.\n"
            "Example: gauntlet matrix --suite nvfp4-gemm --rows backend --cols hardware --format markdown");
  c->add_option("--suite", o->suite, "suite name")->required();
  c->add_option("--sweep", o->sweep, "only this sweep's trials (default: the latest verdict of every sweep)");
  c->add_option("--rows", o->rows, "one or two parameters, comma-separated (default: the suite's first two)");
  c->add_option("--cols", o->cols, "'hardware' or a parameter")->capture_default_str();
  c->add_option("--fingerprint", o->fingerprint, "only results with this software fingerprint (canonical JSON)");
  c->add_option("--format", o->format, "output: table, csv, json, markdown")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}))
      ->capture_default_str();
  AddConnOptions(c, &o->conn);
  c->callback([o, code] {
    Resolve(&o->conn);
    http::Client client(o->conn.server, o->conn.token);
    std::string q = "/api/v1/matrix?suite=" + http::UrlEncode(o->suite) + "&cols=" + http::UrlEncode(o->cols);
    if (!o->rows.empty()) q += "&rows=" + http::UrlEncode(o->rows);
    if (o->sweep > 0) q += "&sweep=" + std::to_string(o->sweep);
    if (!o->fingerprint.empty()) q += "&fingerprint=" + http::UrlEncode(o->fingerprint);
    if (o->format == "csv") {
      auto r = CallRaw(client, "GET", q + "&format=csv");
      if (!r) return void(*code = 2);
      std::cout << r->body;
      return;
    }
    auto m = Call(client, "GET", q);
    if (!m) return void(*code = 2);
    if (o->format == "json") {
      std::cout << m->dump(2) << "\n";
      return;
    }
    std::vector<std::string> head;
    for (auto& r : (*m)["rows"]) head.push_back(Str(r));
    std::map<std::pair<json, std::string>, const json*> at;
    for (auto& cell : (*m)["cells"]) at[{cell["row"], Str(cell["col"])}] = &cell;
    for (auto& col : (*m)["col_keys"]) head.push_back(Str(col));
    const bool md = o->format == "markdown";
    Rows rows;
    std::vector<std::string> prev;
    for (auto& rk : (*m)["row_keys"]) {
      std::vector<std::string> row;
      for (size_t i = 0; i < rk.size(); ++i) {
        std::string v = Str(rk[i]);
        // In a terminal table a repeated outer key is left blank, so the groups stand out; Markdown
        // keeps every key, since people sort and cut pasted tables.
        if (!md && rk.size() > 1 && i == 0 && !prev.empty() && prev[0] == v) row.push_back("");
        else row.push_back(md && !v.empty() ? "`" + v + "`" : v);
      }
      prev.clear();
      for (auto& k : rk) prev.push_back(Str(k));
      for (auto& col : (*m)["col_keys"]) {
        auto it = at.find({rk, Str(col)});
        if (it == at.end()) {
          row.push_back(md ? "" : "-");
          continue;
        }
        const json& cell = *it->second;
        std::string text = CellText(cell);
        if (!md) text = VerdictColor(cell["verdict"].is_string() ? cell["verdict"].get<std::string>() : "") + text + Reset();
        row.push_back(text);
      }
      rows.push_back(std::move(row));
    }
    std::string title = (md ? "**" + o->suite + "**" : o->suite);
    if (o->sweep > 0) title += " · sweep " + std::to_string(o->sweep);
    else title += " · latest verdicts";
    if ((*m)["key_metric"].is_string()) title += " · metric " + (*m)["key_metric"].get<std::string>();
    if (rows.empty()) {
      std::cerr << "gauntlet: no results for " << o->suite << (o->sweep > 0 ? " in sweep " + std::to_string(o->sweep) : "")
                << " yet\n";
      return;
    }
    std::cout << title << "\n\n";
    Print(o->format, head, rows);
  });
}

}  // namespace gauntlet::cli
