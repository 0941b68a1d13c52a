// `gauntlet best` (GET /api/v1/recommend) and `gauntlet check` (GET /api/v1/check): what to run on
// each hardware class, and whether one configuration is known to work before any GPU time is spent.
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/advice_text.h"
#include "core/yaml_json.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

// A config's words are the API's (core/advice_text.h); a metric's spread shows as ± here.
std::string FlagsOf(const json& c) { return AdviceFlags(c); }
std::string RegionOf(const json& region) { return AdviceRegion(region); }
std::string MetricOf(const json& c) { return AdviceMetric(c, MetricSpread::kHalfWidth); }

std::string RateOf(const json& c) {
  const json& p = c["pass_rate"];
  if (p.is_null()) return "";
  std::string s = p["passed"].dump() + "/" + p["runs"].dump();
  if (c["reused"].get<int64_t>() > 0) s += " (+" + c["reused"].dump() + " reused)";
  return s;
}

// Prints the API's own text form of `target` (its &format=), so the CLI words it as the API does;
// sets *code to 2 when the call fails (the error is printed). Uses `client` on the calling thread.
void PrintApiForm(net::Client& client, const std::string& target, const std::string& format, int* code) {
  auto r = CallRaw(client, "GET", target + "&format=" + format);
  if (!r) return void(*code = 2);
  std::cout << r->body;
}

// `gauntlet best`: the fastest configuration that passed with confidence, per hardware class.
void AddBestCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto suite = std::make_shared<std::string>();
  auto hardware = std::make_shared<std::string>();
  auto metric = std::make_shared<std::string>();
  auto by = std::make_shared<std::vector<std::string>>();
  auto c = app.add_subcommand("best", "The fastest configuration that passed with confidence, per hardware class");
  c->add_option("--suite", *suite, "suite name")->required();
  c->add_option("--hardware", *hardware, "one hardware class (default: every class the suite ran on)");
  c->add_option("--by", *by, "parameters whose values split the answer into regions (shape, batch...)")->delimiter(',');
  c->add_option("--metric", *metric, "the metric to rank by (default: the suite's key metric)");
  AddClientOptions(c, o.get(), {"table", "json", "markdown", "shell"});
  c->callback([=] {
    auto client = Connect(*o);
    std::string target = "/api/v1/recommend?suite=" + http::UrlEncode(*suite);
    if (!hardware->empty()) target += "&hardware=" + http::UrlEncode(*hardware);
    if (!metric->empty()) target += "&metric=" + http::UrlEncode(*metric);
    if (!by->empty()) {
      std::string list;
      for (auto& b : *by) list += (list.empty() ? "" : ",") + b;
      target += "&by=" + http::UrlEncode(list);
    }
    if (o->format == "markdown" || o->format == "shell") return PrintApiForm(*client, target, o->format, code);
    auto r = Call(*client, "GET", target);
    if (!r) return void(*code = 2);
    if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
    Rows rows;
    for (auto& i : (*r)["items"]) {
      const json& b = i["best"];
      const json& u = i["runner_up"];
      rows.push_back({i["hardware"].get<std::string>(), RegionOf(i["region"]), b.is_null() ? "none passes" : FlagsOf(b),
                      b.is_null() ? "" : MetricOf(b), b.is_null() ? "" : RateOf(b),
                      u.is_null() ? "" : FlagsOf(u) + " " + MetricOf(u), i["decision"].get<std::string>(),
                      b.is_null() ? "" : b["evidence"].get<std::string>()});
    }
    if (rows.empty()) return void(std::cout << "no runs of " << *suite << " to judge yet\n");
    const size_t width = TerminalWidth();
    PrintTable({"hardware", "region", "run", "metric", "passed", "runner-up", "decision", "evidence"}, rows, width, 2);
    // A fitted table may cut the run; its launch flags are printed whole, to paste (`--format shell`
    // prints them as a script).
    if (width > 0) {
      std::cout << "\nto run (whole):\n";
      for (auto& i : (*r)["items"])
        if (!i["best"].is_null())
          std::cout << "  " << i["hardware"].get<std::string>()
                    << (RegionOf(i["region"]).empty() ? "" : " " + RegionOf(i["region"])) << ": " << FlagsOf(i["best"]) << "\n";
    }
  });
}

// `gauntlet declare`: a suite's declared support (a published table) registered with the daemon.
void AddDeclareCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto suite = std::make_shared<std::string>();
  auto file = std::make_shared<std::string>();
  auto c = app.add_subcommand("declare", "Register a suite's declared support (source and rules, JSON or YAML file)");
  c->add_option("--suite", *suite, "suite name")->required();
  c->add_option("file", *file, "the declaration: {\"source\": {\"url\", \"version\"}, \"rules\": [...]}")->required();
  AddClientOptions(c, o.get());
  c->callback([=] {
    auto body = ReadJsonOrYaml(*file);
    if (!body.ok()) {
      std::cerr << "gauntlet: " << *file << ": " << body.status().message() << "\n";
      return void(*code = 2);
    }
    auto client = Connect(*o);
    auto r = Call(*client, "PUT", "/api/v1/suites/" + http::UrlEncode(*suite) + "/declared", body->dump());
    if (!r) return void(*code = 2);
    std::cout << "declared support of " << *suite << ": " << (*r)["rules_count"] << " rules from "
              << (*r)["source"]["url"].get<std::string>() << "; gauntlet drift --suite " << *suite << " compares\n";
  });
}

}  // namespace

void AddAdviceCommands(CLI::App& app, int* code) {
  AddBestCommand(app, code);
  {
    auto o = std::make_shared<ClientOptions>();
    auto suite = std::make_shared<std::string>();
    auto hardware = std::make_shared<std::string>();
    auto fingerprint = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    auto c = app.add_subcommand("check",
                                "Is this configuration known to work here? Exit 0 passes, 1 fails, 3 unknown (2: error)");
    c->add_option("--suite", *suite, "suite name")->required();
    c->add_option("--hardware", *hardware, "hardware class (default: the one class the suite ran on)");
    c->add_option("--fingerprint", *fingerprint, "only runs under this software fingerprint (canonical JSON)");
    c->add_option("--set", *sets, "a parameter's value, K=V (repeat; omitted ones take their default)");
    AddClientOptions(c, o.get(), {"table", "json", "markdown"});
    c->callback([=] {
      std::string target = "/api/v1/check?suite=" + http::UrlEncode(*suite);
      if (!hardware->empty()) target += "&hardware=" + http::UrlEncode(*hardware);
      if (!fingerprint->empty()) target += "&fingerprint=" + http::UrlEncode(*fingerprint);
      for (auto& kv : *sets) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::cerr << "gauntlet: --set " << kv << ": expected K=V\n";
          return void(*code = 2);
        }
        target += "&config." + http::UrlEncode(kv.substr(0, eq)) + "=" + http::UrlEncode(kv.substr(eq + 1));
      }
      auto client = Connect(*o);
      auto r = Call(*client, "GET", target);
      if (!r) return void(*code = 2);
      *code = (*r)["exit_code"].get<int>();
      if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
      if (o->format == "markdown") return PrintApiForm(*client, target, o->format, code);
      const json& j = *r;
      std::cout << j["known"].get<std::string>() << ": " << FlagsOf(j) << " on " << j["hardware"].get<std::string>() << "\n";
      if (!j["latest"].is_null()) {
        const json& l = j["latest"];
        std::cout << "  latest: " << l["verdict"].get<std::string>()
                  << (l["signature"].get<std::string>().empty() ? "" : " " + l["signature"].get<std::string>()) << " (trial "
                  << l["trial"] << ", gauntlet logs " << l["trial"] << ")\n  passed: " << RateOf(j) << ", evidence "
                  << j["evidence"].get<std::string>() << "\n";
      } else {
        std::cout << "  never ran on this hardware";
        if (!(*fingerprint).empty()) std::cout << " under this fingerprint";
        std::cout << "\n";
      }
      // What the framework itself answered when a probe stage asked it (SUITE_FORMAT.md "probe stages").
      if (j.contains("framework") && j["framework"].is_object()) {
        const json& fw = j["framework"];
        std::cout << "  declared by framework" << (fw["framework"].get<std::string>().empty() ? "" : " " + fw["framework"].get<std::string>())
                  << (fw["version"].get<std::string>().empty() ? "" : " " + fw["version"].get<std::string>()) << ": "
                  << (fw["supported"].get<bool>() ? "supported" : "unsupported")
                  << (fw["reason"].get<std::string>().empty() ? "" : " (" + fw["reason"].get<std::string>().substr(0, 200) + ")") << "\n";
      }
      if (!j["nearest"].empty()) std::cout << "nearest passing:\n";
      for (auto& n : j["nearest"]) {
        std::string changed;
        for (auto& ch : n["changed"]) changed += (changed.empty() ? "" : ",") + ch.get<std::string>();
        std::cout << "  " << FlagsOf(n) << "  (changes " << changed << "; " << MetricOf(n) << (MetricOf(n).empty() ? "" : "; ")
                  << n["evidence"].get<std::string>() << ")\n";
      }
    });
  }
  {
    auto o = std::make_shared<ClientOptions>();
    auto suite = std::make_shared<std::string>();
    auto hardware = std::make_shared<std::string>();
    auto agrees = std::make_shared<bool>(false);
    auto c = app.add_subcommand("drift", "Where the runs disagree with the suite's declared support (a published support table)");
    c->add_option("--suite", *suite, "suite name")->required();
    c->add_option("--hardware", *hardware, "one hardware class");
    c->add_flag("--agrees", *agrees, "list the configs that behave as declared too");
    AddClientOptions(c, o.get(), {"table", "json", "markdown"});
    c->callback([=] {
      auto client = Connect(*o);
      std::string target = "/api/v1/drift?suite=" + http::UrlEncode(*suite);
      if (!hardware->empty()) target += "&hardware=" + http::UrlEncode(*hardware);
      if (*agrees) target += "&agrees=1";
      if (o->format == "markdown") return PrintApiForm(*client, target, o->format, code);
      auto r = Call(*client, "GET", target);
      if (!r) return void(*code = 2);
      if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
      Rows rows;
      for (auto& i : (*r)["items"]) {
        const json& l = i["observed"]["latest"];
        const json& d = i["declared"];
        std::string observed = l["verdict"].get<std::string>();
        if (!l["signature"].get<std::string>().empty()) observed += " " + l["signature"].get<std::string>();
        if (i["kind"] == "unsupported_but_passing") observed = "passed " + MetricOf(i["observed"]);
        const json& fw = i["framework"];
        rows.push_back({i["kind"].get<std::string>(), i["hardware"].get<std::string>(), FlagsOf(i),
                        d.is_null() ? "" : (d["supported"].get<bool>() ? "supported" : "unsupported"),
                        fw.is_null() ? "" : (fw["supported"].get<bool>() ? "supported" : "unsupported"), observed,
                        l["trial"].dump()});
      }
      const json& sum = (*r)["summary"];
      const json& src = (*r)["source"];
      std::cout << "declared by " << (src.is_null() ? std::string() : src["url"].get<std::string>() + " and ")
                << "the framework's own answers (" << (*r)["framework_claims"] << " configs): " << sum["supported_but_failing"]
                << " supported but failing, " << sum["unsupported_but_passing"] << " unsupported but passing, "
                << sum["undeclared"] << " undeclared, " << sum["agrees"] << " agree\n";
      if (!rows.empty())
        PrintTable({"drift", "hardware", "config", "declared", "framework", "observed", "trial"}, rows, TerminalWidth(), 2);
    });
  }
  AddDeclareCommand(app, code);
}

}  // namespace gauntlet::cli
