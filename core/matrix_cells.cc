#include "core/matrix_cells.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/cell_reason.h"
#include "core/json_text.h"
#include "core/verdict.h"

namespace gauntlet {
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
  if (family == "infra") return info->verdict == Verdict::kTimeout ? "⏳" : "🔧";
  if (family == "none") return "·";
  return "❌";
}

// "1234567" -> "1,234,567": the integer part of a formatted number grouped by thousands.
std::string Grouped(const std::string& num) {
  size_t start = num[0] == '-' ? 1 : 0, end = num.find_first_of(".e");
  if (end == std::string::npos) end = num.size();
  std::string out = num.substr(end);
  for (size_t i = end, n = 0; i > start; --i, ++n) out.insert(0, num.substr(i - 1, 1) + (n > 0 && n % 3 == 0 ? "," : ""));
  return num.substr(0, start) + out;
}

std::string Number(double v) {
  char buf[64];
  if (std::fabs(v) >= 100) snprintf(buf, sizeof buf, "%.0f", v);
  else if (std::fabs(v) >= 10) snprintf(buf, sizeof buf, "%.1f", v);
  else snprintf(buf, sizeof buf, "%.3g", v);
  return Grouped(buf);
}

bool HasValue(const json& m) { return m.is_object() && m.contains("value") && m["value"].is_number(); }

std::string Str(const json& v) { return JsonText(v); }

const json& Field(const json& o, const char* k) {
  static const json kNull;
  return o.is_object() && o.contains(k) ? o[k] : kNull;
}

std::string StrField(const json& o, const char* k) {
  const json& v = Field(o, k);
  return v.is_string() ? v.get<std::string>() : "";
}

// "passed 2 · wrong output 1": `n` per verdict (by label) in the vocabulary's order, those `keep` accepts.
std::string PerVerdict(const std::map<std::string, int64_t>& n, const char* sep, bool (*keep)(const std::string&)) {
  std::string out;
  for (auto& v : Verdicts())
    if (auto it = n.find(std::string(v.name)); it != n.end() && it->second > 0 && keep(it->first))
      out += (out.empty() ? "" : sep) + std::string(v.label) + " " + std::to_string(it->second);
  return out;
}

std::string PendingText(const json& c) {
  std::string pending;
  for (auto& [k, v] : Field(c, "counts").items())
    pending += (pending.empty() ? "" : ", ") + v.dump() + " " + (ParseTrialState(k) == TrialState::kLeased ? "running" : k);
  return "… " + (pending.empty() ? std::string("pending") : pending);
}

// Configs per verdict of a mixed cell, from its breakdown.
std::string MixedText(const json& c) {
  std::map<std::string, int64_t> n;
  for (auto& b : Field(c, "breakdown")) n[StrField(b, "verdict")] += Field(b, "configs").get<int64_t>();
  std::string t = "◐ mixed: " + Field(c, "passed").dump() + "/" + Field(c, "configs").dump() + " passed";
  std::string rest = PerVerdict(n, " · ", [](const std::string& v) { return ParseVerdict(v) != Verdict::kPassed; });
  return rest.empty() ? t : t + " · " + rest;
}

// Trials per judged verdict of a flaky cell: the disagreement is between runs, so runs are counted.
std::string FlakyText(const json& c) {
  std::map<std::string, int64_t> n;
  for (auto& [k, v] : Field(c, "counts").items())
    if (v.is_number_integer()) n[k] = v.get<int64_t>();
  return "↯ flaky: " + PerVerdict(n, " · ", [](const std::string& v) { return VerdictSeverity(v) >= 0; });
}

}  // namespace

std::string MetricText(const json& m) {
  if (!HasValue(m)) return "";
  const std::string unit = StrField(m, "unit");
  return Number(m["value"].get<double>()) + (unit.empty() ? "" : " " + unit);
}

std::string CellVerdict(const json& c) { return StrField(c, "verdict"); }

std::string CellReason(const json& c, const std::vector<std::string>* stages) {
  const std::string state = StrField(c, "state"), v = CellVerdict(c);
  if (v.empty() || (state != "failed" && state != "skipped")) return "";
  return ReasonText(v, StrField(c, "signature"), stages);
}

namespace {
std::string CellFace(const json& c);
}  // namespace

std::string CellText(const json& c) {
  // Results filed by reuse are copies, not runs: the cell says how many there were.
  const json& reused = Field(c, "reused");
  const int64_t n = reused.is_number_integer() ? reused.get<int64_t>() : 0;
  return CellFace(c) + (n > 0 ? " (+" + std::to_string(n) + " reused)" : "");
}

namespace {
std::string CellFace(const json& c) {
  // An older daemon's cells have no state: read them by their verdict alone.
  const std::string v = CellVerdict(c);
  std::string state = StrField(c, "state");
  if (state.empty()) {
    const std::optional<Verdict> pv = ParseVerdict(v);
    state = v.empty() ? "pending" : pv == Verdict::kPassed ? "passed" : pv == Verdict::kSkipped ? "skipped" : "failed";
  }
  if (state == "pending" || v.empty()) return PendingText(c);
  if (state == "mixed") return MixedText(c);
  if (state == "flaky") return FlakyText(c);
  if (state == "passed") {
    const json& lo = HasValue(Field(c, "metric_min")) ? Field(c, "metric_min") : Field(c, "metric");
    const json& hi = HasValue(Field(c, "metric_max")) ? Field(c, "metric_max") : Field(c, "metric");
    if (!HasValue(hi)) return Icon(v) + " passed";
    const std::string a = Number(lo["value"].get<double>()), b = MetricText(hi);
    return Icon(v) + " " + (b.rfind(a, 0) == 0 && (b.size() == a.size() || b[a.size()] == ' ') ? b : a + "–" + b);
  }
  // The daemon's words (it knows the suite's stages), else the same mapping here.
  const std::string reason = StrField(c, "reason");
  return Icon(v) + " " + (reason.empty() ? ReasonText(v, StrField(c, "signature")) : reason);
}
}  // namespace

namespace {

std::string CellPlace(const json& c, const std::string& quote) {
  std::string place;
  for (auto& k : Field(c, "row")) place += (place.empty() ? "" : " · ") + quote + Str(k) + quote;
  return place + " · " + quote + Str(Field(c, "col")) + quote;
}

// "passed with size=s; unsupported with size=m|l": only the hidden parameters whose values differ
// between the verdicts say something, so only those are named.
std::string MixedLine(const json& c) {
  std::map<std::string, std::set<std::string>> all;
  for (auto& b : Field(c, "breakdown"))
    for (auto& [p, vals] : Field(b, "values").items())
      for (auto& x : vals) all[p].insert(Str(x));
  std::string out;
  for (auto& b : Field(c, "breakdown")) {
    std::string with;
    for (auto& [p, vals] : Field(b, "values").items()) {
      if (all[p].size() < 2) continue;
      std::string vs;
      for (auto& x : vals) vs += (vs.empty() ? "" : "|") + Str(x);
      with += (with.empty() ? "" : ", ") + p + "=" + vs;
    }
    const int64_t n = Field(b, "configs").get<int64_t>();
    const VerdictInfo* info = FindVerdict(StrField(b, "verdict"));
    out += (out.empty() ? "" : "; ") + (info ? std::string(info->label) : StrField(b, "verdict")) +
           (with.empty() ? " " + std::to_string(n) + (n == 1 ? " config" : " configs") : " with " + with);
  }
  return out;
}

// "flaky: size=s, size=m judged more than one way (latest trials 18, 20); trials: passed 2, crashed 2",
// the configs in the order they last ran.
std::string FlakyLine(const json& c, const json& hidden) {
  std::vector<std::pair<int64_t, std::string>> configs;  // (latest trial, its hidden values)
  for (auto& f : Field(c, "flaky")) {
    std::string cfg;
    for (auto& p : hidden)
      if (Field(f, "config").contains(Str(p))) cfg += (cfg.empty() ? "" : ",") + Str(p) + "=" + Str(f["config"][Str(p)]);
    const json& t = Field(f, "trial");
    configs.emplace_back(t.is_number() ? t.get<int64_t>() : 0, cfg.empty() ? "its config" : cfg);
  }
  std::sort(configs.begin(), configs.end());
  std::string which, trials;
  for (auto& [t, cfg] : configs) {
    which += (which.empty() ? "" : ", ") + cfg;
    trials += (trials.empty() ? "" : ", ") + std::to_string(t);
  }
  std::map<std::string, int64_t> n;
  for (auto& [k, v] : Field(c, "counts").items())
    if (v.is_number_integer()) n[k] = v.get<int64_t>();
  std::string rate;
  const json& p = Field(c, "pass_rate");
  if (p.is_object() && p.contains("rate")) {
    char buf[96];
    snprintf(buf, sizeof buf, "; pass rate %.0f%% of %lld runs (95%%: %.0f-%.0f%%)", 100 * p["rate"].get<double>(),
             static_cast<long long>(p["runs"].get<int64_t>()), 100 * p["low"].get<double>(), 100 * p["high"].get<double>());
    rate = buf;
    if (p.value("reused", int64_t{0}) > 0) rate += "; " + std::to_string(p["reused"].get<int64_t>()) + " reused, not counted";
  }
  return "flaky: " + which + " judged more than one way (latest " + (configs.size() == 1 ? "trial " : "trials ") + trials +
         "); trials: " + PerVerdict(n, ", ", [](const std::string& v) { return VerdictSeverity(v) >= 0; }) + rate;
}

}  // namespace

std::string LayerText(const json& cell) {
  std::string text;
  if (cell.contains("dispatch") && cell["dispatch"].is_string()) text += " [" + Str(cell["dispatch"]) + "]";
  if (cell.contains("evidence") && cell["evidence"].is_string()) text += " [evidence: " + Str(cell["evidence"]) + "]";
  if (!cell.contains("drift") || !cell["drift"].is_object()) return text;
  const json& d = cell["drift"];
  const std::string kind = StrField(d, "kind");
  if (kind == "agrees") return text;
  std::string by;
  if (d.contains("declared_by") && d["declared_by"].is_array())
    for (auto& b : d["declared_by"]) by += (by.empty() ? "" : "+") + Str(b);
  text += " [" + kind + (by.empty() ? "" : " (" + by + ")");
  if (d.contains("signature") && d["signature"].is_string() && !Str(d["signature"]).empty()) text += ": " + Str(d["signature"]);
  if (d.contains("metric") && d["metric"].is_object() && d["metric"].contains("mean") && d["metric"]["mean"].is_number()) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.4g", d["metric"]["mean"].get<double>());
    text += ": " + std::string(buf) + " " + StrField(d["metric"], "unit");
  }
  return text + "]";
}

std::vector<std::string> Disagreements(const json& m, const std::string& quote) {
  std::map<std::pair<json, std::string>, const json*> at;
  for (auto& cell : Field(m, "cells")) at[{cell["row"], Str(cell["col"])}] = &cell;
  std::vector<std::string> out;
  for (auto& rk : Field(m, "row_keys"))
    for (auto& col : Field(m, "col_keys")) {
      auto it = at.find({rk, Str(col)});
      if (it == at.end()) continue;
      const json& c = *it->second;
      const std::string state = StrField(c, "state");
      if (state == "mixed") out.push_back(CellPlace(c, quote) + ": " + MixedLine(c));
      else if (state == "flaky") out.push_back(CellPlace(c, quote) + ": " + FlakyLine(c, Field(m, "hidden")));
    }
  return out;
}

}  // namespace gauntlet
