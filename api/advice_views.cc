#include "api/advice_views.h"

#include <cmath>
#include "core/advice_text.h"
#include "core/launch_line.h"

namespace gauntlet::api {
using nlohmann::json;

namespace {

json MetricJson(const ConfigRuns& c, const std::optional<MetricSummary>& m) {
  if (!m) return nullptr;
  return {{"name", c.metric_name}, {"unit", c.metric_unit}, {"mean", m->mean}, {"low", m->low}, {"high", m->high}, {"n", m->n}};
}

json RunsJson(const Suite& suite, const ConfigRuns& c, const std::optional<MetricSummary>& m) {
  const LaunchLine line = LaunchFor(suite, c.config);
  json verdicts = json::object();
  for (auto& [v, n] : c.verdicts) verdicts[std::string(Name(v))] = n;
  json rate = nullptr;
  if (c.runs > 0) {
    const Interval w = WilsonInterval(c.passed, c.runs);
    rate = {{"passed", c.passed}, {"runs", c.runs}, {"rate", double(c.passed) / c.runs}, {"low", w.low}, {"high", w.high}};
  }
  return {{"config_key", c.config_key}, {"config", ConfigJson(c.config)}, {"flags", line.flags}, {"env", line.env},
          {"shell", line.shell}, {"runs", c.runs}, {"passed", c.passed}, {"reused", c.reused}, {"pass_rate", rate},
          {"verdicts", verdicts}, {"metric", MetricJson(c, m)}, {"evidence", EvidenceName(EvidenceOf(c))},
          {"trial", c.latest_trial}, {"fingerprint", c.fingerprint}};
}

std::string RegionText(const json& region) {
  const std::string s = AdviceRegion(region);
  return s.empty() ? "(all)" : s;
}

std::string MetricText(const json& c) {
  const std::string s = AdviceMetric(c, MetricSpread::kInterval);
  return s.empty() ? "—" : s;
}

std::string Cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

}  // namespace

json RecommendJson(const Suite& suite, const std::vector<std::string>& by, const std::string& metric,
                   const std::vector<Recommendation>& recs) {
  json items = json::array();
  for (const auto& r : recs) {
    json best = r.best ? RunsJson(suite, *r.best->runs, r.best->metric) : json(nullptr);
    json runner = r.runner_up ? RunsJson(suite, *r.runner_up->runs, r.runner_up->metric) : json(nullptr);
    json margin = nullptr;
    if (r.best && r.runner_up && r.best->metric && r.runner_up->metric && r.runner_up->metric->mean != 0)
      margin = std::fabs(r.best->metric->mean - r.runner_up->metric->mean) / std::fabs(r.runner_up->metric->mean);
    items.push_back({{"hardware", r.hardware}, {"region", ConfigJson(r.region)}, {"decision", DecisionName(r.decision)},
                     {"configs", r.configs}, {"candidates", r.candidates}, {"lower_is_better", r.lower_is_better},
                     {"best", best}, {"runner_up", runner}, {"margin", margin}});
  }
  return {{"suite", suite.name}, {"version", suite.version}, {"by", by}, {"metric", metric.empty() ? json(nullptr) : json(metric)},
          {"confident_low", kConfidentLow}, {"items", items}};
}

std::string RecommendMarkdown(const json& j) {
  std::string out = "**Best configuration per hardware** — suite `" + j["suite"].get<std::string>() + "` v" +
                    j["version"].dump() + " (passed with confidence: every run passed or the 95% pass-rate interval's low end ≥ " +
                    AdviceNumber(j["confident_low"]) + ")\n\n| hardware | region | run | metric | runner-up | decision | evidence | fingerprint |\n"
                    "|---|---|---|---|---|---|---|---|\n";
  for (auto& i : j["items"]) {
    const json& b = i["best"];
    const json& r = i["runner_up"];
    out += "| " + Cell(i["hardware"]) + " | " + Cell(RegionText(i["region"])) + " | " +
           (b.is_null() ? "none passes" : "`" + Cell(AdviceFlags(b)) + "`") + " | " + (b.is_null() ? "" : Cell(MetricText(b))) +
           " | " + (r.is_null() ? "" : "`" + Cell(AdviceFlags(r)) + "` " + Cell(MetricText(r))) + " | " +
           i["decision"].get<std::string>() + " | " + (b.is_null() ? "" : b["evidence"].get<std::string>()) + " | " +
           (b.is_null() ? "" : "`" + Cell(b["fingerprint"]) + "`") + " |\n";
  }
  return out;
}

std::string RecommendShell(const json& j) {
  std::string out;
  for (auto& i : j["items"]) {
    const json& b = i["best"];
    out += "# " + i["hardware"].get<std::string>() + " · " + RegionText(i["region"]) + ": " +
           i["decision"].get<std::string>() + "\n";
    if (!b.is_null()) out += b["shell"].get<std::string>() + "\n";
  }
  return out;
}

json CheckJson(const Suite& suite, const std::string& hardware, const Config& config, const Preflight& p) {
  const LaunchLine line = LaunchFor(suite, config);
  json j = {{"suite", suite.name}, {"version", suite.version}, {"hardware", hardware}, {"config_key", ConfigKey(config)},
            {"config", ConfigJson(config)}, {"known", KnownName(p.known)}, {"exit_code", KnownExitCode(p.known)},
            {"flags", line.flags}, {"env", line.env}, {"shell", line.shell}, {"latest", nullptr},
            {"evidence", EvidenceName(Evidence::kNone)}, {"runs", 0}, {"passed", 0}, {"reused", 0},
            {"pass_rate", nullptr}, {"verdicts", json::object()}};
  if (p.match) {
    json own = RunsJson(suite, *p.match, Summarize(p.match->metric));
    for (const char* k : {"runs", "passed", "reused", "pass_rate", "verdicts", "evidence", "metric"}) j[k] = own[k];
    j["latest"] = {{"verdict", Name(p.match->latest)}, {"signature", p.match->latest_signature},
                   {"trial", p.match->latest_trial}, {"fingerprint", p.match->fingerprint}};
  }
  json near = json::array();
  for (const auto& n : p.nearest) {
    json c = RunsJson(suite, *n.runs, n.metric);
    c["changed"] = n.changed;
    near.push_back(std::move(c));
  }
  j["nearest"] = std::move(near);
  return j;
}

std::string CheckMarkdown(const json& j) {
  std::string out = "**" + j["known"].get<std::string>() + "**: `" + Cell(AdviceFlags(j)) + "` (suite `" +
                    j["suite"].get<std::string>() + "` v" + j["version"].dump() + ") on " + Cell(j["hardware"]) + "\n\n";
  if (!j["latest"].is_null()) {
    const json& l = j["latest"];
    const json& r = j["pass_rate"];
    out += "- latest: " + l["verdict"].get<std::string>() +
           (l["signature"].get<std::string>().empty() ? "" : " `" + Cell(l["signature"]) + "`") + ", trial " + l["trial"].dump() +
           ", fingerprint `" + Cell(l["fingerprint"]) + "`\n";
    if (!r.is_null())
      out += "- passed " + r["passed"].dump() + " of " + r["runs"].dump() + " runs (95%: " + AdviceNumber(100 * r["low"].get<double>()) +
             "–" + AdviceNumber(100 * r["high"].get<double>()) + "%)" +
             (j["reused"].get<int64_t>() ? ", " + j["reused"].dump() + " reused results not counted" : "") + "\n";
    out += "- evidence: " + j["evidence"].get<std::string>() + "\n";
  } else {
    out += "- never ran on this hardware\n";
  }
  if (j.contains("framework") && j["framework"].is_object()) {
    const json& fw = j["framework"];
    out += "- declared by framework" + (fw["framework"].get<std::string>().empty() ? "" : " " + Cell(fw["framework"])) +
           (fw["version"].get<std::string>().empty() ? "" : " " + Cell(fw["version"])) + ": " +
           (fw["supported"].get<bool>() ? "supported" : "unsupported") +
           (fw["reason"].get<std::string>().empty() ? "" : " (" + Cell(fw["reason"].get<std::string>().substr(0, 300)) + ")") + "\n";
  }
  if (!j["nearest"].empty()) out += "\nNearest passing:\n\n";
  for (auto& n : j["nearest"]) {
    std::string changed;
    for (auto& c : n["changed"]) changed += (changed.empty() ? "" : ", ") + c.get<std::string>();
    out += "- `" + Cell(AdviceFlags(n)) + "` (changes " + changed + "): " + MetricText(n) + ", " + n["evidence"].get<std::string>() + "\n";
  }
  return out;
}

}  // namespace gauntlet::api
