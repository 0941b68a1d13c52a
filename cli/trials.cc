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
#include "cli/suggest.h"
#include "core/basis.h"
#include "core/verdict.h"
#include "http/http.h"

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

// Up to `limit` trials from cursor `after` (0: the start), read in pages of at most 1000 (the API's
// cap) following `next`. *rest gets the cursor of what the limit left out, or null when nothing was.
std::optional<json> ReadTrials(net::Client& client, const std::string& q, int limit, int64_t after, json* rest,
                               int* status) {
  json all = json::array();
  *rest = json();
  std::string cursor = after > 0 ? "&after=" + std::to_string(after) : "";
  while (static_cast<int>(all.size()) < limit) {
    int page = std::min(limit - static_cast<int>(all.size()), 1000);
    auto r = Call(client, "GET", "/api/v1/trials?limit=" + std::to_string(page) + q + cursor, {}, status);
    if (!r) return std::nullopt;
    for (auto& t : (*r)["items"]) all.push_back(t);
    *rest = (*r)["next"];
    if (rest->is_null()) break;
    cursor = "&after=" + rest->dump();
  }
  return all;
}

// A listing cut short looks complete unless it says so: one line on stderr (stdout stays data) with
// the cursor that reads on.
void SayCut(int limit, const std::string& next) {
  std::cerr << "gauntlet: --limit " << limit << " cut the listing; more trials follow: add --after " << next
            << " for the next ones (or raise --limit)\n";
}

// After a 422, the filter values the daemon refused with the nearest allowed one (the daemon's line
// names the field and lists them all).
void SuggestFilters(const std::map<std::string, std::string>& f) {
  static const std::vector<std::string> kStates = [] {
    std::vector<std::string> names;
    for (TrialState s : {TrialState::kQueued, TrialState::kLeased, TrialState::kRunning, TrialState::kDone})
      names.emplace_back(Name(s));
    return names;
  }();
  if (auto v = f.find("verdict"); v != f.end() && !v->second.empty()) SuggestValue("--verdict", v->second, Verdicts());
  if (auto s = f.find("state"); s != f.end() && !s->second.empty()) SuggestValue("--state", s->second, kStates);
}

void PrintTrials(const std::string& format, json& all) {
  Rows rows;
  for (auto& t : all) {
    std::string config;
    for (auto& [k, v] : t["config"].items()) config += (config.empty() ? "" : " ") + k + "=" + Str(v);
    std::string v = Str(t["verdict"]);
    // A failure the exit status alone judged is a guess: say so beside the verdict (core/basis.h).
    const bool guess = t.value("unclassified", false) ||
                       (VerdictSeverity(v) > 0 && UnclassifiedSignature(Str(t["signature"])));
    rows.push_back({Str(t["id"]), Str(t["sweep"]), Str(t["state"]), VerdictColor(v) + v + Reset() + (guess ? " (unclassified)" : ""),
                    Str(t["signature"]),
                    Str(t["hardware"]), config});
  }
  Print(format, {"TRIAL", "SWEEP", "STATE", "VERDICT", "SIGNATURE", "HARDWARE", "CONFIG"}, rows);
}

// A trial that never ran has no log of its own: pruning skipped it, or reuse gave it an earlier
// trial's verdict. Printing nothing would look like a lost log; say why on stderr and name the trial
// whose log holds the reason, following reuse of reuse back to the trial that ran.
void ExplainEmptyLog(net::Client& client, int64_t id) {
  auto get = [&](int64_t t) -> std::optional<json> {
    auto r = client.Send("GET", "/api/v1/trials/" + std::to_string(t));
    if (!r.ok() || r->status != 200) return std::nullopt;
    json j = json::parse(r->body, nullptr, false);
    return j.is_object() ? std::optional<json>(j) : std::nullopt;
  };
  auto t = get(id);
  if (!t || !(*t)["started_at"].is_null()) return;  // it ran and wrote nothing: nothing to add
  const std::string verdict = Str((*t)["verdict"]);
  const std::optional<Verdict> pv = ParseVerdict(verdict);
  const json& ev = (*t)["evidence_trial"];
  const std::string why = pv == Verdict::kSkipped     ? "it was skipped, never run"
                          : pv == Verdict::kCancelled ? "it was cancelled before it started"
                          : ev.is_number()         ? "it never ran: it took an earlier trial's verdict, " + verdict
                                                   : "it never ran";
  // The evidence says which trial settled it and how: "pruned: trial 2 ended unsupported (...)".
  const std::string evidence = (*t)["result"].is_object() ? Str((*t)["result"].value("evidence", json())) : "";
  std::cerr << "gauntlet: trial " << id << " has no log: " << why << (evidence.empty() ? "" : " (" + evidence + ")") << "\n";
  if (!ev.is_number()) return;
  int64_t ran = ev.get<int64_t>();
  for (int hop = 0; hop < 16; ++hop) {  // a chain of reuse is short; the bound only guards a cycle
    auto e = get(ran);
    if (!e || !(*e)["started_at"].is_null() || !(*e)["evidence_trial"].is_number()) break;
    ran = (*e)["evidence_trial"].get<int64_t>();
  }
  std::cerr << "gauntlet: the log that explains it: gauntlet logs " << ran << "\n";
}

// `gauntlet logs N --tests`: the trial's test cases (GET /api/v1/trials/N `tests`), the ones that did
// not pass first, one line each: verdict, test, signature.
void PrintTestCases(const json& tests, int64_t id) {
  if (!tests.is_object() || tests.value("cases", json::array()).empty()) {
    std::cout << "trial " << id << " reported no test cases\n";
    return;
  }
  std::string counts;
  for (auto& [v, n] : tests["counts"].items()) counts += (counts.empty() ? "" : ", ") + std::to_string(n.get<int>()) + " " + v;
  std::cout << "trial " << id << ": " << tests.value("total", 0) << " tests (" << counts << ")";
  if (tests.value("not_stored", 0) > 0) std::cout << "; " << tests["not_stored"].get<int64_t>() << " not stored";
  std::cout << "\n";
  for (int pass = 0; pass < 2; ++pass) {
    for (const json& c : tests["cases"]) {
      if ((ParseVerdict(Str(c["verdict"])) == Verdict::kPassed) != (pass == 1)) continue;
      std::cout << "  " << Str(c["verdict"]);
      for (size_t w = Str(c["verdict"]).size(); w < 13; ++w) std::cout << ' ';
      std::cout << Str(c["name"]);
      if (c.contains("signature")) std::cout << "  " << Str(c["signature"]);
      std::cout << "\n";
    }
  }
}

}  // namespace

void AddTrialsCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto f = std::make_shared<std::map<std::string, std::string>>();
  auto params = std::make_shared<std::vector<std::string>>();
  auto limit = std::make_shared<int>(1000);
  auto after = std::make_shared<int64_t>(0);
  auto c = app.add_subcommand("trials", "List trials, filtered as GET /api/v1/trials");
  c->add_option("--sweep", (*f)["sweep"], "sweep id");
  c->add_option("--suite", (*f)["suite"], "suite name");
  c->add_option("--state", (*f)["state"], "queued, leased, running or done");
  c->add_option("--verdict", (*f)["verdict"], JoinNames(Verdicts()));
  c->add_option("--hardware", (*f)["hardware"], "hardware class, e.g. 'NVIDIA H200 · sm_90 · x1'");
  c->add_option("--param", *params, "NAME=VALUE: only trials whose config has it (repeatable)");
  // The API lists oldest first for the clients written before `order`; a person asks what just happened.
  (*f)["order"] = "newest";
  c->add_option("--order", (*f)["order"], "newest or oldest first")
      ->check(CLI::IsMember({"newest", "oldest"}))
      ->capture_default_str();
  c->add_option("--sort", (*f)["sort"],
                "sort by a column: id, config, hardware, state, verdict, signature, node or took (the daemon "
                "checks it); --order newest lists it descending, oldest ascending");
  c->add_option("--limit", *limit, "at most this many trials")->capture_default_str();
  c->add_option("--after", *after, "start after this trial (the cursor a cut listing names)");
  AddClientOptions(c, o.get(), {"table", "json", "csv", "markdown"});
  c->callback([=] {
    auto q = TrialsQuery(*f, *params);
    if (!q) return void(*code = 2);
    auto client = Connect(*o);
    // A filter naming a parameter (or value) that does not exist matches nothing, which would read
    // as "no such trials": say it is a mistake instead, with the nearest name.
    if (!params->empty()) {
      const std::string& sweep = (*f)["sweep"];
      const int64_t sweep_id = !sweep.empty() && sweep.find_first_not_of("0123456789") == std::string::npos ? std::stoll(sweep) : 0;
      if (auto known = SuiteParameters(*client, (*f)["suite"], sweep_id)) {
        const std::string where = !(*f)["suite"].empty() ? "suite " + (*f)["suite"]
                                  : sweep_id > 0        ? "sweep " + sweep + "'s suite"
                                                        : "any suite";
        if (!CheckParamFilters(*params, *known, where)) return void(*code = 2);
      }
    }
    int status = 0;
    const int n = std::max(1, *limit);
    if (o->format == "csv") {
      // The daemon's CSV has one column per parameter; pass it through unchanged.
      auto r = CallRaw(*client, "GET", "/api/v1/trials?format=csv&limit=" + std::to_string(n) + *q +
                                           (*after > 0 ? "&after=" + std::to_string(*after) : ""), {}, &status);
      if (!r) {
        if (status == 422) SuggestFilters(*f);
        if (status == 404 && !(*f)["suite"].empty()) SuggestSuite(*client, (*f)["suite"]);
        return void(*code = 2);
      }
      std::cout << r->body;
      // A cut CSV listing names the rest in its Link header: <?after=N>; rel="next".
      const std::string link = r->Header("Link");
      if (auto a = link.find("after="); a != std::string::npos)
        SayCut(n, link.substr(a + 6, link.find_first_not_of("0123456789", a + 6) - a - 6));
      return;
    }
    json rest;
    auto all = ReadTrials(*client, *q, n, *after, &rest, &status);
    if (!all) {
      if (status == 422) SuggestFilters(*f);
      if (status == 404 && !(*f)["suite"].empty()) SuggestSuite(*client, (*f)["suite"]);
      return void(*code = 2);
    }
    if (o->format == "json") std::cout << all->dump(2) << "\n";
    else PrintTrials(o->format, *all);
    if (!rest.is_null()) SayCut(n, rest.dump());
  });
}

void AddLogsCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto trial = std::make_shared<int64_t>(0);
  auto follow = std::make_shared<bool>(false);
  auto tests = std::make_shared<bool>(false);
  auto c = app.add_subcommand("logs", "Print a trial's log");
  c->add_option("trial", *trial, "trial id")->required();
  c->add_flag("-f,--follow", *follow, "keep printing as the log grows, until the trial is done");
  c->add_flag("--tests", *tests, "print the trial's test cases (its test runner's report) instead of the log");
  AddClientOptions(c, o.get());
  c->callback([=] {
    auto client = Connect(*o);
    if (*tests) {
      auto t = Call(*client, "GET", "/api/v1/trials/" + std::to_string(*trial));
      if (!t) return void(*code = 2);
      PrintTestCases(t->value("tests", json()), *trial);
      return;
    }
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
    bool done = false;
    while (true) {
      const uint64_t seen = watch ? watch->generation() : 0;
      auto r = CallRaw(*client, "GET", "/api/v1/trials/" + std::to_string(*trial) + "/log?offset=" + std::to_string(offset));
      if (!r) return void(*code = 2);
      std::cout << r->body << std::flush;
      const std::string nx = r->Header("X-Next-Offset");
      const int64_t next = nx.empty() ? offset + static_cast<int64_t>(r->body.size()) : std::stoll(nx);
      done = r->Header("X-Trial-Done") == "true";
      const bool progressed = next > offset;
      offset = next;
      if (!*follow || (done && !progressed)) break;
      // Log appends publish no event (they would flood the stream), so while the trial runs the
      // log is re-read every second; a state change (the end) wakes the reader at once.
      if (!progressed) watch->Wait(seen, std::chrono::seconds(1));
    }
    if (offset == 0 && done) ExplainEmptyLog(*client, *trial);
  });
}

}  // namespace gauntlet::cli
