// `gauntlet diff A B`: what changed between two runs (GET /api/v1/compare), as a table, Markdown
// (for a pull request or an issue), CSV or JSON; exit 1 when something broke, so CI can gate on it.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/verdict.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

// The query naming side `x` from its argument: a sweep id, `vN` (a suite version) or anything else
// (a fingerprint, as the trials show it); the last two need --suite.
std::optional<std::string> SideQuery(const std::string& x, const std::string& arg, const std::string& suite) {
  const bool digits = !arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos;
  if (digits) return x + "=" + arg;
  if (suite.empty()) {
    std::cerr << "gauntlet: '" << arg << "' is not a sweep id; a suite version (v2) or fingerprint needs --suite\n";
    return std::nullopt;
  }
  const bool version = arg.size() > 1 && arg[0] == 'v' && arg.find_first_not_of("0123456789", 1) == std::string::npos;
  return version ? x + "_version=" + arg.substr(1) : x + "_fingerprint=" + http::UrlEncode(arg);
}

std::string VerdictText(const json& side) {
  if (side.is_null()) return "-";
  std::string v = side["verdict"];
  std::string sig = side["signature"];
  return VerdictColor(v) + v + Reset() + (sig.empty() || ParseVerdict(v) == Verdict::kPassed ? "" : " (" + sig + ")");
}

std::string MetricChangeText(const json& it) {
  if (it["metric_change"].is_null()) return "";
  char buf[32];
  snprintf(buf, sizeof buf, "%+.1f%%", it["metric_change"].get<double>() * 100);
  return buf;
}

}  // namespace

void AddDiffCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto a = std::make_shared<std::string>();
  auto b = std::make_shared<std::string>();
  auto suite = std::make_shared<std::string>();
  auto threshold = std::make_shared<double>(0.1);
  auto all = std::make_shared<bool>(false);
  auto c = app.add_subcommand("diff", "What changed between two sweeps (or two suite versions or fingerprints)");
  c->footer(
      "Per config x hardware: broke (passed before, fails now; a more severe failure; or the key metric fell by "
      "more than --threshold), became flaky (passed before and fails now, but the same software passed it too), "
      "fixed, changed (another failing verdict or signature), new, gone, same. "
      "Exit status: 0 nothing broke (a config that became flaky did not break), 1 something broke, 2 error.");
  c->add_option("a", *a, "the earlier run: a sweep id, or with --suite a version (v1) or a fingerprint")->required();
  c->add_option("b", *b, "the later run, as A")->required();
  c->add_option("--suite", *suite, "the suite whose versions or fingerprints A and B name");
  c->add_option("--threshold", *threshold, "a key-metric fall that counts as broke (0.1 = 10%)")->capture_default_str();
  c->add_flag("--all", *all, "list the gone and same cells too (table, markdown); by default they are only counted");
  AddClientOptions(c, o.get(), {"table", "markdown", "json", "csv"});
  c->callback([=] {
    auto qa = SideQuery("a", *a, *suite);
    auto qb = SideQuery("b", *b, *suite);
    if (!qa || !qb) return void(*code = 2);
    char th[32];
    snprintf(th, sizeof th, "%g", *threshold);
    std::string target = "/api/v1/compare?" + *qa + "&" + *qb + "&threshold=" + th;
    if (!suite->empty()) target += "&suite=" + http::UrlEncode(*suite);
    auto client = Connect(*o);
    auto r = Call(*client, "GET", target);
    if (!r) return void(*code = 2);
    const bool broke = (*r)["summary"].value("broke", int64_t{0}) > 0;
    // Stderr, so a table or CSV on stdout stays data.
    if (r->contains("note")) std::cerr << "gauntlet: " << (*r)["note"].get<std::string>() << "\n";
    if (o->format == "json") {
      std::cout << r->dump(2) << "\n";
      return void(*code = broke ? 1 : 0);
    }
    Rows rows;
    int64_t hidden = 0;
    for (auto& it : (*r)["items"]) {
      // What did not change, and what B did not run (a rerun of the failures leaves most of A
      // "gone"), would bury the rows that matter: counted in the summary, listed with --all.
      if (!*all && o->format != "csv" && (it["change"] == "same" || it["change"] == "gone")) {
        ++hidden;
        continue;
      }
      const std::string change = Str(it["change"]) == "flaky" ? "became flaky" : Str(it["change"]);
      rows.push_back({Str(it["config_key"]), Str(it["hardware"]), change, VerdictText(it["a"]),
                      VerdictText(it["b"]), MetricChangeText(it)});
    }
    if (!rows.empty() || o->format == "csv") Print(o->format, {"CONFIG", "HARDWARE", "CHANGE", "A", "B", "METRIC"}, rows);
    if (o->format != "csv") {
      std::string line;
      for (const char* k : {"broke", "flaky", "fixed", "changed", "new", "gone", "same", "pending"})
        if ((*r)["summary"].value(k, int64_t{0}) > 0)
          line += (line.empty() ? "" : ", ") + std::to_string((*r)["summary"][k].get<int64_t>()) + " " +
                  (std::string(k) == "flaky" ? "became flaky" : k);
      std::cout << (o->format == "markdown" ? "\n" : "") << (line.empty() ? "nothing to compare" : line)
                << (hidden > 0 ? " (gone and same not listed: --all lists them)" : "") << "\n";
      for (const char* side : {"a", "b"})
        if ((*r)[side].contains("dashboard_url"))
          std::cout << side << ": " << o->conn.server << (*r)[side]["dashboard_url"].get<std::string>() << "\n";
    }
    *code = broke ? 1 : 0;
  });
}

}  // namespace gauntlet::cli
