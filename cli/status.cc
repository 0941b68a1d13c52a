// `gauntlet status`: the latest sweeps (or one) with progress and verdict counts, in every output
// format; with --wait, follows one sweep as `submit --wait` does.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/sweep_progress.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

// What a person should know that the counts do not say: trials a big sweep has yet to store,
// targets no node can run, trials that took an earlier verdict (reused), trials pruned.
std::string SweepNote(const json& s) {
  std::string n = ReusedText(s);
  if (s.value("expanding", false))
    n += (n.empty() ? "" : "; ") + ("expanding: " + Str(s["materialized"]) + " of " + Str(s["trials"]) + " stored");
  if (s.contains("unmatched_targets") && !s["unmatched_targets"].empty())
    n += (n.empty() ? "" : "; ") + ("no node for " + std::to_string(s["unmatched_targets"].size()) + " target(s)");
  for (const std::string& l : HeldOutLines(s)) n += (n.empty() ? "" : "; ") + ("waits: " + l);
  if (s.contains("pruned") && s["pruned"].value("trials", int64_t{0}) > 0) {
    char buf[96];
    // GPU time is what pruning saves; pruned CPU trials have none to count.
    const double gpu_h = s["pruned"].value("gpu_hours_saved", 0.0);
    if (gpu_h > 0)
      snprintf(buf, sizeof buf, "pruned %lld (%.1f GPU-h saved)", static_cast<long long>(s["pruned"]["trials"].get<int64_t>()), gpu_h);
    else
      snprintf(buf, sizeof buf, "pruned %lld (CPU trials)", static_cast<long long>(s["pruned"]["trials"].get<int64_t>()));
    n += (n.empty() ? "" : "; ") + std::string(buf);
    // Only a request whose targets have prices carries it; the unit is theirs.
    if (auto c = s["pruned"].find("cost_saved"); c != s["pruned"].end() && c->is_number()) {
      snprintf(buf, sizeof buf, ", %.2f in the targets' price saved", c->get<double>());
      n.insert(n.size() - 1, buf);
    }
  }
  return n;
}

// One column per verdict, so a script can read counts without parsing text. `items` is not const so
// that a field a sweep lacks reads as empty (json's operator[] adds it as null) rather than failing.
void PrintSweepsCsv(std::vector<json>& items) {
  std::vector<std::string> head = {"id", "name", "suite", "trials", "done", "running", "finished"};
  for (auto& v : Verdicts()) head.push_back(v);
  head.push_back("reused");  // after the verdicts: a reused trial is counted under its verdict too
  Rows rows;
  for (auto& s : items) {
    std::vector<std::string> r = {Str(s["id"]), Str(s["name"]), Str(s["suite"]), Str(s["trials"]), Str(s["done"]),
                                  std::to_string(RunningTrials(s)), s["finished"].get<bool>() ? "true" : "false"};
    for (auto& v : Verdicts()) r.push_back(std::to_string(s["by_verdict"].value(v, int64_t{0})));
    r.push_back(std::to_string(s.value("reused", int64_t{0})));
    rows.push_back(r);
  }
  PrintCsv(head, rows);
}

void PrintSweeps(const std::string& format, std::vector<json>& items) {
  if (format == "csv") return PrintSweepsCsv(items);
  Rows rows;
  for (auto& s : items)
    rows.push_back({Str(s["id"]), Str(s["name"]), Str(s["suite"]), Str(s["done"]) + "/" + Str(s["trials"]),
                    std::to_string(RunningTrials(s)), CountsLine(s, format == "markdown" ? ", " : " "), SweepNote(s)});
  Print(format, {"SWEEP", "NAME", "SUITE", "DONE", "RUNNING", "VERDICTS", "NOTE"}, rows);
}

}  // namespace

void AddStatusCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto sweep = std::make_shared<int64_t>(0);
  auto limit = std::make_shared<int>(50);
  auto wait = std::make_shared<bool>(false);
  auto json_lines = std::make_shared<bool>(false);
  auto wait_for_nodes = std::make_shared<bool>(false);
  auto c = app.add_subcommand("status", "Show sweeps (or one sweep) with progress and verdict counts");
  c->add_option("sweep", *sweep, "sweep id (default: the latest sweeps)");
  c->add_option("--limit", *limit, "how many sweeps to list")->capture_default_str();
  c->add_flag("--wait", *wait, "follow SWEEP until it is finished; exit status as `submit --wait`");
  c->add_flag("--json", *json_lines, "with --wait: JSON lines even on a terminal");
  c->add_flag("--wait-for-nodes", *wait_for_nodes, "with --wait: keep waiting while no registered node can run a target");
  AddClientOptions(c, o.get(), {"table", "json", "csv", "markdown"});
  c->callback([=] {
    auto client = Connect(*o);
    if (*wait) {
      if (*sweep <= 0) {
        std::cerr << "gauntlet: status --wait needs a sweep id\n";
        return void(*code = 2);
      }
      auto fin = FollowSweep(*client, o->conn, *sweep, {IsTty() && !*json_lines, *wait_for_nodes});
      if (!fin) return void(*code = 2);
      return void(*code = SweepFailed((*fin)["by_verdict"]) ? 1 : 0);
    }
    std::vector<json> items;
    if (*sweep > 0) {
      auto s = Call(*client, "GET", "/api/v1/sweeps/" + std::to_string(*sweep));
      if (!s) return void(*code = 2);
      items.push_back(*s);
    } else {
      auto s = Call(*client, "GET", "/api/v1/sweeps?limit=" + std::to_string(std::clamp(*limit, 1, 1000)));
      if (!s) return void(*code = 2);
      for (auto& i : (*s)["items"]) items.push_back(i);
    }
    for (auto& i : items)
      if (i.contains("dashboard_url")) i["dashboard_url"] = o->conn.server + i["dashboard_url"].get<std::string>();
    if (o->format == "json") {
      std::cout << (*sweep > 0 ? items[0] : json(items)).dump(2) << "\n";
      return;
    }
    PrintSweeps(o->format, items);
    // One sweep: where to see it, and where it came from (tables and Markdown; CSV stays a table).
    if (*sweep > 0 && o->format != "csv") {
      const json& s = items[0];
      std::string from = s.value("source", "");
      if (!s["rerun_of"].is_null()) from += " of sweep " + s["rerun_of"].dump();
      if (!s.value("submitted_by", "").empty()) from += " by " + s["submitted_by"].get<std::string>();
      if (!from.empty()) std::cout << "submitted: " << from << "\n";
      if (s.contains("dashboard_url")) std::cout << "dashboard: " << s["dashboard_url"].get<std::string>() << "\n";
      for (const std::string& l : HeldOutLines(s)) std::cout << "waits: " << l << "\n";
    }
  });
}

}  // namespace gauntlet::cli
