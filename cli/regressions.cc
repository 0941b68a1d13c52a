// `gauntlet regressions [--suite S] [--kind K] [--threshold F]`: configs that got worse on their
// hardware (GET /api/v1/regressions): a worse latest verdict, a key metric that fell, or a failure
// at a later value of an ordered parameter than one that passed, with the bisection that searches
// that gap or the command that starts one.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {
std::string Str(const json& j, const char* k) {
  return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
}
std::string Id(const json& j, const char* k) {
  return j.is_object() && j.contains(k) && j[k].is_number_integer() ? std::to_string(j[k].get<int64_t>()) : "";
}

// "v2" for a row of suite version 2; an ordered one of an older version than the suite's latest
// says so ("v1 (latest v2)"), since a newer suite may have settled it.
std::string Version(const json& r) {
  const std::string v = Id(r, "suite_version");
  if (v.empty()) return "";
  const std::string latest = Id(r, "latest_version");
  return "v" + v + (!latest.empty() && latest != v ? " (latest v" + latest + ")" : "");
}

// "3 passed (#12)" for an ordered side, "passed (#12)" for a verdict or metric one.
std::string Side(const json& s) {
  std::string out = Str(s, "value");
  if (!out.empty()) out += " ";
  out += Str(s, "verdict");
  if (s.contains("metric") && s["metric"].is_number()) out += " " + s["metric"].dump();
  else if (s.contains("metric") && s["metric"].is_object()) out += " " + s["metric"]["value"].dump();
  if (!Id(s, "trial").empty()) out += " (#" + Id(s, "trial") + ")";
  return out;
}

// What was done about it: the bisection and its answer, the first bad value, or "none".
std::string Answer(const json& r) {
  if (r.value("kind", "") != "ordered") return "";
  const json& b = r["bisection"];
  if (b.is_object()) {
    std::string out = "bisection #" + Id(b, "id") + " " + Str(b, "state");
    if (b["first_bad"].is_string()) out += ": first bad " + b["first_bad"].get<std::string>();
    return out;
  }
  if (r["first_bad"].is_string()) return "first bad " + r["first_bad"].get<std::string>();
  return "no bisection";
}

std::string Config(const json& r) {
  if (!r.contains("config") || !r["config"].is_object()) return Str(r, "config_key");
  std::string out;
  for (auto& [k, v] : r["config"].items()) out += (out.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return out.empty() ? "-" : out;
}
}  // namespace

void AddRegressionsCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto suite = std::make_shared<std::string>();
  auto kind = std::make_shared<std::string>();
  auto threshold = std::make_shared<std::string>();
  auto c = app.add_subcommand("regressions", "Configs that got worse: a worse verdict, a slower key metric, a later ordered value");
  c->add_option("--suite", *suite, "only this suite");
  c->add_option("--kind", *kind, "only verdict, metric or ordered regressions")->check(CLI::IsMember({"verdict", "metric", "ordered"}));
  c->add_option("--threshold", *threshold, "the key-metric fall that counts (a fraction; default 0.1)");
  AddClientOptions(c, o.get(), {"table", "csv", "json"});
  c->callback([=] {
    std::string q;
    auto add = [&](const char* k, const std::string& v) {
      if (!v.empty()) q += (q.empty() ? "?" : "&") + std::string(k) + "=" + http::UrlEncode(v);
    };
    add("suite", *suite);
    add("kind", *kind);
    add("threshold", *threshold);
    auto client = Connect(*o);
    auto r = Call(*client, "GET", "/api/v1/regressions" + q);
    if (!r) return void(*code = 2);
    if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
    Rows rows;
    std::vector<std::string> starts;
    for (auto& i : (*r)["items"]) {
      const bool ordered = i.value("kind", "") == "ordered";
      if (o->format == "csv") {
        rows.push_back({Str(i, "suite"), Id(i, "suite_version"), Str(i, "kind"), Config(i), Str(i, "hardware"), Str(i, "parameter"),
                        Str(i["before"], "value"), Str(i["before"], "verdict"), Id(i["before"], "trial"),
                        Str(i["after"], "value"), Str(i["after"], "verdict"), Id(i["after"], "trial"),
                        ordered ? i["untested"].dump() : "", Id(i["bisection"], "id"), Str(i["bisection"], "state"),
                        ordered && i["first_bad"].is_string() ? i["first_bad"].get<std::string>()
                                                             : Str(i["bisection"], "first_bad"),
                        Str(i["start"], "command")});
        continue;
      }
      rows.push_back({Str(i, "suite"), Version(i), Config(i), Str(i, "hardware"), ordered ? Str(i, "parameter") : Str(i, "kind"),
                      Side(i["before"]), Side(i["after"]), Answer(i)});
      if (ordered && i["start"].is_object()) starts.push_back(Str(i["start"], "command"));
    }
    if (o->format == "csv")
      return PrintCsv({"suite", "suite_version", "kind", "config", "hardware", "parameter", "before_value", "before_verdict", "before_trial",
                       "after_value", "after_verdict", "after_trial", "untested", "bisection", "bisection_state", "first_bad",
                       "start_command"},
                      rows);
    if (rows.empty()) std::cout << "no regressions" << (suite->empty() ? "" : " in " + *suite) << "\n";
    else PrintTable({"suite", "version", "config", "hardware", "what", "before", "after", "answer"}, rows, TerminalWidth());
    if (!starts.empty()) std::cout << "\nno bisection was started for these; to start one:\n";
    for (auto& s : starts) std::cout << "  " << s << "\n";
    // Flaky configs are no regressions: said apart, with the pass rate that shows it.
    const json& flaky = r->contains("flaky") ? (*r)["flaky"] : json::array();
    if (!flaky.empty()) std::cout << "\nflaky, not regressions (passed and failed in turn):\n";
    for (auto& i : flaky) {
      const json& p = i["pass_rate"];
      char rate[96] = "";
      if (p.is_object())
        snprintf(rate, sizeof rate, ": %lld/%lld passed (95%%: %.0f-%.0f%%)", static_cast<long long>(p["passed"].get<int64_t>()),
                 static_cast<long long>(p["runs"].get<int64_t>()), 100 * p["low"].get<double>(), 100 * p["high"].get<double>());
      std::cout << "  " << Str(i, "suite") << " " << Version(i) << " " << Config(i) << " on " << Str(i, "hardware") << rate << "\n";
    }
  });
}

}  // namespace gauntlet::cli
