// `gauntlet triage`: the failures no tool explained (GET /api/v1/triage), the most trials first,
// each with the line the classifier would have used and an example trial; `triage label` (admin)
// labels one, re-judging every trial it matches; `triage labels` lists them; `triage withdraw ID`
// takes one back. docs/CLI.md "triage".
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

void AddLabelCommand(CLI::App* triage, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto body = std::make_shared<json>(json::object());
  auto f = std::make_shared<std::map<std::string, std::string>>();
  auto c = triage->add_subcommand("label", "Label a signature (admin): re-judges every stored trial it matches, and later ones");
  c->add_option("signature", (*f)["signature"], "the signature to label, as triage lists it")->required();
  c->add_option("--verdict", (*f)["verdict"], "the verdict it gets (unsupported, crashed, wrong_output, timeout, oom, infra_error, passed)")
      ->required();
  c->add_option("--match", (*f)["match"], "a text the trial's evidence must hold (default: any)");
  c->add_option("--suite", (*f)["suite"], "only this suite (default: every suite)");
  c->add_option("--note", (*f)["note"], "why, for whoever reads the trial later");
  c->add_option("--as", (*f)["new_signature"], "the signature the trials get (default: <verdict>:label:<id>)");
  AddClientOptions(c, o.get(), {"table", "json"});
  c->callback([=] {
    json b = json::object();
    for (auto& [k, v] : *f)
      if (!v.empty()) b[k] = v;
    auto client = Connect(*o);
    auto r = Call(*client, "POST", "/api/v1/labels", b.dump());
    if (!r) return void(*code = 2);
    if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
    std::cout << "label " << (*r)["id"] << ": " << (*r)["signature"].get<std::string>() << " -> "
              << (*r)["verdict"].get<std::string>() << " (" << (*r)["new_signature"].get<std::string>() << "); re-judged "
              << (*r)["rejudged"] << " trial(s)\n";
  });
}

void AddWithdrawCommand(CLI::App* triage, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto id = std::make_shared<int64_t>(0);
  auto c = triage->add_subcommand("withdraw", "Withdraw a label (admin): its trials go back to what they were");
  c->add_option("id", *id, "the label's id (gauntlet triage labels)")->required();
  AddClientOptions(c, o.get(), {"table", "json"});
  c->callback([=] {
    auto client = Connect(*o);
    auto r = Call(*client, "POST", "/api/v1/labels/" + std::to_string(*id) + "/withdraw", "{}");
    if (!r) return void(*code = 2);
    if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
    std::cout << "label " << *id << " withdrawn; " << (*r)["rejudged"] << " trial(s) back to their earlier verdict\n";
  });
}

void AddLabelsCommand(CLI::App* triage, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto c = triage->add_subcommand("labels", "Every label: its rule, who made it, how many trials it re-judged");
  AddClientOptions(c, o.get(), {"table", "json"});
  c->callback([=] {
    auto client = Connect(*o);
    auto r = Call(*client, "GET", "/api/v1/labels");
    if (!r) return void(*code = 2);
    if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
    Rows rows;
    for (auto& l : (*r)["items"])
      rows.push_back({l["id"].dump(), l["signature"].get<std::string>(), l["match"].get<std::string>(),
                      l["suite"].is_null() ? "(all)" : l["suite"].get<std::string>(), l["verdict"].get<std::string>(),
                      l["rejudged"].dump(), l["created_by"].get<std::string>(),
                      l["withdrawn_at"].is_null() ? "" : "withdrawn", l["note"].get<std::string>()});
    if (rows.empty()) return void(std::cout << "no labels\n");
    PrintTable({"ID", "SIGNATURE", "MATCH", "SUITE", "VERDICT", "TRIALS", "BY", "STATE", "NOTE"}, rows, TerminalWidth());
  });
}

}  // namespace

void AddTriageCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto suite = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(100);
  auto c = app.add_subcommand("triage", "Failures no tool explained (judged from the exit status alone), most trials first");
  c->add_option("--suite", *suite, "one suite (default: every suite)");
  c->add_option("--limit", *limit, "at most this many groups (1-500)");
  AddClientOptions(c, o.get(), {"table", "json"});
  c->callback([=] {
    if (!c->get_subcommands().empty()) return;  // a subcommand ran
    auto client = Connect(*o);
    std::string target = "/api/v1/triage?limit=" + std::to_string(*limit);
    if (!suite->empty()) target += "&suite=" + http::UrlEncode(*suite);
    auto r = Call(*client, "GET", target);
    if (!r) return void(*code = 2);
    if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
    Rows rows;
    for (auto& i : (*r)["items"]) {
      std::string suites;
      for (auto& s : i["suites"]) suites += (suites.empty() ? "" : ",") + s.get<std::string>();
      rows.push_back({i["trials"].dump(), i["signature"].get<std::string>(), i["evidence"].get<std::string>(), suites,
                      i["example_trial"].dump()});
    }
    if (rows.empty()) return void(std::cout << "nothing to triage: every failure has a reason a tool gave\n");
    PrintTable({"TRIALS", "SIGNATURE", "LAST LINE", "SUITES", "EXAMPLE"}, rows, TerminalWidth());
    std::cout << "\nlabel one: gauntlet triage label SIGNATURE --match 'TEXT' --verdict VERDICT [--suite S] --note '...'\n";
  });
  c->require_subcommand(0, 1);
  AddLabelCommand(c, code);
  AddLabelsCommand(c, code);
  AddWithdrawCommand(c, code);
}

}  // namespace gauntlet::cli
