// `gauntlet trials` and `gauntlet logs`: a sweep's (or any filter's) trials, and one trial's log,
// optionally followed while the trial runs.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/verdict.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

// The query string ("&k=v...") of GET /api/v1/trials for the given filters and NAME=VALUE params;
// nullopt, after a one-line error, when a param has no NAME=.
std::optional<std::string> TrialsQuery(const std::map<std::string, std::string>& filters,
                                       const std::vector<std::string>& params) {
  std::string q;
  for (auto& [k, v] : filters)
    if (!v.empty()) q += "&" + k + "=" + http::UrlEncode(v);
  for (auto& p : params) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "gauntlet: --param: '" << p << "' is not NAME=VALUE\n";
      return std::nullopt;
    }
    q += "&param." + http::UrlEncode(p.substr(0, eq)) + "=" + http::UrlEncode(p.substr(eq + 1));
  }
  return q;
}

// Up to `limit` trials, read in pages of at most 1000 (the API's cap) following `next`.
std::optional<json> ReadTrials(http::Client& client, const std::string& q, int limit) {
  json all = json::array();
  std::string after;
  while (static_cast<int>(all.size()) < limit) {
    int page = std::min(limit - static_cast<int>(all.size()), 1000);
    auto r = Call(client, "GET", "/api/v1/trials?limit=" + std::to_string(page) + q + after);
    if (!r) return std::nullopt;
    for (auto& t : (*r)["items"]) all.push_back(t);
    if ((*r)["next"].is_null()) break;
    after = "&after=" + (*r)["next"].dump();
  }
  return all;
}

void PrintTrials(const std::string& format, json& all) {
  Rows rows;
  for (auto& t : all) {
    std::string config;
    for (auto& [k, v] : t["config"].items()) config += (config.empty() ? "" : " ") + k + "=" + Str(v);
    std::string v = Str(t["verdict"]);
    rows.push_back({Str(t["id"]), Str(t["sweep"]), Str(t["state"]), VerdictColor(v) + v + Reset(), Str(t["signature"]),
                    Str(t["hardware"]), config});
  }
  Print(format, {"TRIAL", "SWEEP", "STATE", "VERDICT", "SIGNATURE", "HARDWARE", "CONFIG"}, rows);
}

}  // namespace

void AddTrialsCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto f = std::make_shared<std::map<std::string, std::string>>();
  auto params = std::make_shared<std::vector<std::string>>();
  auto limit = std::make_shared<int>(1000);
  auto c = app.add_subcommand("trials", "List trials, filtered as GET /api/v1/trials");
  c->add_option("--sweep", (*f)["sweep"], "sweep id");
  c->add_option("--suite", (*f)["suite"], "suite name");
  c->add_option("--state", (*f)["state"], "queued, leased, running or done");
  c->add_option("--verdict", (*f)["verdict"], JoinNames(Verdicts()));
  c->add_option("--hardware", (*f)["hardware"], "hardware class, e.g. 'NVIDIA H200 · sm_90 · x1'");
  c->add_option("--param", *params, "NAME=VALUE: only trials whose config has it (repeatable)");
  c->add_option("--limit", *limit, "at most this many trials")->capture_default_str();
  AddClientOptions(c, o.get(), {"table", "json", "csv", "markdown"});
  c->callback([=] {
    auto q = TrialsQuery(*f, *params);
    if (!q) return void(*code = 2);
    auto client = Connect(*o);
    if (o->format == "csv") {
      // The daemon's CSV has one column per parameter; pass it through unchanged.
      auto r = CallRaw(*client, "GET", "/api/v1/trials?format=csv&limit=" + std::to_string(std::max(1, *limit)) + *q);
      if (!r) return void(*code = 2);
      std::cout << r->body;
      return;
    }
    auto all = ReadTrials(*client, *q, *limit);
    if (!all) return void(*code = 2);
    if (o->format == "json") {
      std::cout << all->dump(2) << "\n";
      return;
    }
    PrintTrials(o->format, *all);
  });
}

void AddLogsCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto trial = std::make_shared<int64_t>(0);
  auto follow = std::make_shared<bool>(false);
  auto c = app.add_subcommand("logs", "Print a trial's log");
  c->add_option("trial", *trial, "trial id")->required();
  c->add_flag("-f,--follow", *follow, "keep printing as the log grows, until the trial is done");
  AddClientOptions(c, o.get());
  c->callback([=] {
    auto client = Connect(*o);
    std::unique_ptr<EventWatch> watch;
    if (*follow) {
      auto t = Call(*client, "GET", "/api/v1/trials/" + std::to_string(*trial));
      if (!t) return void(*code = 2);
      // One stream for the whole follow: the trial's sweep events wake the reader when the trial
      // changes state (and so when it ends).
      watch = std::make_unique<EventWatch>(o->conn.server, o->conn.token, "/api/v1/events?sweep=" + Str((*t)["sweep"]));
      watch->WaitConnected(std::chrono::seconds(5));
    }
    int64_t offset = 0;
    while (true) {
      const uint64_t seen = watch ? watch->generation() : 0;
      auto r = CallRaw(*client, "GET", "/api/v1/trials/" + std::to_string(*trial) + "/log?offset=" + std::to_string(offset));
      if (!r) return void(*code = 2);
      std::cout << r->body << std::flush;
      const std::string nx = r->Header("X-Next-Offset");
      const int64_t next = nx.empty() ? offset + static_cast<int64_t>(r->body.size()) : std::stoll(nx);
      const bool done = r->Header("X-Trial-Done") == "true";
      const bool progressed = next > offset;
      offset = next;
      if (!*follow || (done && !progressed)) break;
      // Log appends publish no event (they would flood the stream), so while the trial runs the
      // log is re-read every second; a state change (the end) wakes the reader at once.
      if (!progressed) watch->Wait(seen, std::chrono::seconds(1));
    }
  });
}

}  // namespace gauntlet::cli
