#include "daemon/cli.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "daemon/cli_common.h"
#include "daemon/yaml_json.h"

namespace gauntlet {
using nlohmann::json;
using cli::Call;
using cli::Str;

namespace {

struct Common {
  cli::Conn conn;
  std::string format = "table";
};

void AddConn(CLI::App* c, Common* o, bool with_format) {
  c->add_option("--server", o->conn.server, "daemon URL (or GAUNTLET_SERVER, ~/.config/gauntlet/config)");
  c->add_option("--token", o->conn.token, "API token (or GAUNTLET_TOKEN)");
  if (with_format)
    c->add_option("--format", o->format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
}

std::unique_ptr<http::Client> Connect(Common& o) {
  cli::Resolve(&o.conn);
  return std::make_unique<http::Client>(o.conn.server, o.conn.token);
}

bool Failed(const json& by_verdict) {
  for (auto& [v, n] : by_verdict.items())
    if (v != "passed" && v != "skipped" && n.get<int64_t>() > 0) return true;
  return false;
}

std::string CountsLine(const json& s) {
  std::string out;
  for (auto& [v, n] : s["by_verdict"].items())
    out += (out.empty() ? "" : " ") + cli::VerdictColor(v) + v + "=" + n.dump() + cli::Reset();
  return out;
}

// Follows a sweep until it is finished; prints progress. Returns the final sweep JSON or nullopt.
std::optional<json> WaitSweep(http::Client& client, int64_t id, bool tty) {
  auto t0 = std::chrono::steady_clock::now();
  std::string last_line;
  while (true) {
    auto s = Call(client, "GET", "/api/v1/sweeps/" + std::to_string(id));
    if (!s) return std::nullopt;
    const int64_t total = (*s)["trials"].get<int64_t>(), done = (*s)["done"].get<int64_t>();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (tty) {
      const int width = 30;
      int fill = total ? static_cast<int>(width * done / total) : width;
      std::string eta = done > 0 && done < total ? " eta " + std::to_string(static_cast<int>(secs / done * (total - done))) + "s" : "";
      std::string line = "\rsweep " + std::to_string(id) + " [" + std::string(fill, '#') + std::string(width - fill, '.') +
                         "] " + std::to_string(done) + "/" + std::to_string(total) + " " + CountsLine(*s) + eta;
      if (line != last_line) std::cout << line << "\033[K" << std::flush;
      last_line = line;
    } else {
      json j = {{"sweep", id}, {"done", done}, {"trials", total}, {"by_verdict", (*s)["by_verdict"]},
                {"by_state", (*s)["by_state"]}};
      std::string line = j.dump();
      if (line != last_line) std::cout << line << "\n" << std::flush;
      last_line = line;
    }
    if ((*s)["finished"].get<bool>()) {
      if (tty) std::cout << "\n";
      return s;
    }
    // Wait for the next change of this sweep on the event stream (or 2 s, whichever first), so the
    // progress follows the daemon without polling in a tight loop.
    std::atomic<bool> got{false};
    http::Client events(client.base(), "");
    auto start = std::chrono::steady_clock::now();
    events.Stream("/api/v1/events?sweep=" + std::to_string(id),
                  [&](std::string_view chunk) {
                    if (chunk.find("data:") != std::string_view::npos) got = true;
                    return !got && std::chrono::steady_clock::now() - start < std::chrono::seconds(2);
                  },
                  std::chrono::seconds(2));
  }
}

}  // namespace

void AddClientCommands(CLI::App& app, int* code) {
  // submit
  {
    auto o = std::make_shared<Common>();
    auto file = std::make_shared<std::string>();
    auto wait = std::make_shared<bool>(false);
    auto c = app.add_subcommand("submit", "Submit a sweep from a JSON or YAML file");
    c->add_option("file", *file, "sweep request (JSON or YAML; '-' reads stdin)")->required();
    c->add_flag("--wait", *wait, "follow the sweep; exit 0 if every trial passed or was skipped, 1 if any failed");
    AddConn(c, o.get(), false);
    c->callback([=] {
      Result<json> body = Status::Invalid("unread");
      if (*file == "-") {
        std::string text((std::istreambuf_iterator<char>(std::cin)), {});
        body = YamlToJson(text);  // YAML is a superset of JSON
      } else {
        body = ReadJsonOrYaml(*file);
      }
      if (!body.ok()) {
        std::cerr << "gauntlet: " << body.status().message() << "\n";
        *code = 2;
        return;
      }
      auto client = Connect(*o);
      auto r = Call(*client, "POST", "/api/v1/sweeps", body->dump());
      if (!r) {
        *code = 2;
        return;
      }
      const int64_t id = (*r)["id"].get<int64_t>();
      const bool tty = cli::IsTty();
      if (tty) std::cout << "sweep " << id << ": " << (*r)["trials"] << " trials\n";
      else std::cout << r->dump() << "\n";
      if (!*wait) return;
      auto fin = WaitSweep(*client, id, tty);
      if (!fin) {
        *code = 2;
        return;
      }
      *code = Failed((*fin)["by_verdict"]) ? 1 : 0;
    });
  }
  // status
  {
    auto o = std::make_shared<Common>();
    auto sweep = std::make_shared<int64_t>(0);
    auto c = app.add_subcommand("status", "Show sweeps (or one sweep) with progress and verdict counts");
    c->add_option("sweep", *sweep, "sweep id");
    AddConn(c, o.get(), true);
    c->callback([=] {
      auto client = Connect(*o);
      std::vector<json> items;
      if (*sweep > 0) {
        auto s = Call(*client, "GET", "/api/v1/sweeps/" + std::to_string(*sweep));
        if (!s) return void(*code = 2);
        items.push_back(*s);
      } else {
        auto s = Call(*client, "GET", "/api/v1/sweeps?limit=50");
        if (!s) return void(*code = 2);
        for (auto& i : (*s)["items"]) items.push_back(i);
      }
      if (o->format == "json") {
        std::cout << (*sweep > 0 ? items[0] : json(items)).dump(2) << "\n";
        return;
      }
      std::vector<std::vector<std::string>> rows;
      for (auto& s : items) {
        std::string unmatched = s.contains("unmatched_targets") && !s["unmatched_targets"].empty()
                                    ? "no node for " + std::to_string(s["unmatched_targets"].size()) + " target(s)"
                                    : "";
        rows.push_back({Str(s["id"]), Str(s["name"]), Str(s["suite"]), Str(s["done"]) + "/" + Str(s["trials"]),
                        CountsLine(s), unmatched});
      }
      if (o->format == "csv") {
        std::cout << "id,name,suite,progress,verdicts,note\n";
        for (auto& r : rows) std::cout << r[0] << "," << r[1] << "," << r[2] << "," << r[3] << "," << r[4] << "," << r[5] << "\n";
        return;
      }
      cli::PrintTable({"SWEEP", "NAME", "SUITE", "DONE", "VERDICTS", "NOTE"}, rows);
    });
  }
  // trials
  {
    auto o = std::make_shared<Common>();
    auto f = std::make_shared<std::map<std::string, std::string>>();
    auto params = std::make_shared<std::vector<std::string>>();
    auto limit = std::make_shared<int>(1000);
    auto c = app.add_subcommand("trials", "List trials with filters");
    for (const char* k : {"sweep", "suite", "state", "verdict", "hardware"})
      c->add_option(std::string("--") + k, (*f)[k], std::string("filter by ") + k);
    c->add_option("--param", *params, "NAME=VALUE (repeatable)");
    c->add_option("--limit", *limit, "at most this many trials");
    AddConn(c, o.get(), true);
    c->callback([=] {
      auto client = Connect(*o);
      std::string q;
      for (auto& [k, v] : *f)
        if (!v.empty()) q += "&" + k + "=" + http::UrlEncode(v);
      for (auto& p : *params) {
        auto eq = p.find('=');
        if (eq == std::string::npos) {
          std::cerr << "gauntlet: --param is NAME=VALUE\n";
          return void(*code = 2);
        }
        q += "&param." + http::UrlEncode(p.substr(0, eq)) + "=" + http::UrlEncode(p.substr(eq + 1));
      }
      if (o->format == "csv") {
        auto r = cli::CallRaw(*client, "GET", "/api/v1/trials?format=csv&limit=" + std::to_string(*limit) + q);
        if (!r) return void(*code = 2);
        std::cout << r->body;
        return;
      }
      json all = json::array();
      std::string after;
      while (static_cast<int>(all.size()) < *limit) {
        auto r = Call(*client, "GET", "/api/v1/trials?limit=" + std::to_string(std::min(*limit, 1000)) + q + after);
        if (!r) return void(*code = 2);
        for (auto& t : (*r)["items"]) all.push_back(t);
        if ((*r)["next"].is_null()) break;
        after = "&after=" + (*r)["next"].dump();
      }
      if (o->format == "json") {
        std::cout << all.dump(2) << "\n";
        return;
      }
      std::vector<std::vector<std::string>> rows;
      for (auto& t : all) {
        std::string config;
        for (auto& [k, v] : t["config"].items()) config += (config.empty() ? "" : " ") + k + "=" + Str(v);
        std::string v = Str(t["verdict"]);
        rows.push_back({Str(t["id"]), Str(t["state"]), cli::VerdictColor(v) + v + cli::Reset(), Str(t["signature"]),
                        Str(t["hardware"]), config});
      }
      cli::PrintTable({"TRIAL", "STATE", "VERDICT", "SIGNATURE", "HARDWARE", "CONFIG"}, rows);
    });
  }
  // suites
  {
    auto o = std::make_shared<Common>();
    auto name = std::make_shared<std::string>();
    auto c = app.add_subcommand("suites", "List suites, or show one");
    c->add_option("name", *name, "suite name");
    AddConn(c, o.get(), true);
    c->callback([=] {
      auto client = Connect(*o);
      if (!name->empty()) {
        auto s = Call(*client, "GET", "/api/v1/suites/" + http::UrlEncode(*name));
        if (!s) return void(*code = 2);
        std::cout << (o->format == "json" ? (*s).dump(2) : (*s)["definition"].dump(2)) << "\n";
        return;
      }
      auto s = Call(*client, "GET", "/api/v1/suites");
      if (!s) return void(*code = 2);
      if (o->format == "json") {
        std::cout << (*s)["items"].dump(2) << "\n";
        return;
      }
      std::vector<std::vector<std::string>> rows;
      for (auto& i : (*s)["items"]) {
        std::string params;
        for (auto& [k, v] : i["parameters"].items()) params += (params.empty() ? "" : ", ") + k;
        rows.push_back({Str(i["name"]), Str(i["version"]), params, Str(i["description"])});
      }
      if (o->format == "csv") {
        std::cout << "name,version,parameters,description\n";
        for (auto& r : rows) std::cout << r[0] << "," << r[1] << ",\"" << r[2] << "\",\"" << r[3] << "\"\n";
        return;
      }
      cli::PrintTable({"SUITE", "VERSION", "PARAMETERS", "DESCRIPTION"}, rows);
    });
  }
  // cancel
  {
    auto o = std::make_shared<Common>();
    auto sweep = std::make_shared<int64_t>(0);
    auto trial = std::make_shared<int64_t>(0);
    auto c = app.add_subcommand("cancel", "Cancel a sweep (or one trial with --trial)");
    c->add_option("sweep", *sweep, "sweep id");
    c->add_option("--trial", *trial, "cancel one trial instead");
    AddConn(c, o.get(), false);
    c->callback([=] {
      auto client = Connect(*o);
      if (*sweep <= 0 && *trial <= 0) {
        std::cerr << "gauntlet: name a sweep id or --trial ID\n";
        return void(*code = 2);
      }
      std::string target = *trial > 0 ? "/api/v1/trials/" + std::to_string(*trial) + "/cancel"
                                      : "/api/v1/sweeps/" + std::to_string(*sweep) + "/cancel";
      auto r = Call(*client, "POST", target);
      if (!r) return void(*code = 2);
      std::cout << r->dump() << "\n";
    });
  }
  // logs
  {
    auto o = std::make_shared<Common>();
    auto trial = std::make_shared<int64_t>(0);
    auto follow = std::make_shared<bool>(false);
    auto c = app.add_subcommand("logs", "Print a trial's log");
    c->add_option("trial", *trial, "trial id")->required();
    c->add_flag("-f,--follow", *follow, "keep printing as the log grows, until the trial is done");
    AddConn(c, o.get(), false);
    c->callback([=] {
      auto client = Connect(*o);
      int64_t offset = 0;
      while (true) {
        auto r = cli::CallRaw(*client, "GET", "/api/v1/trials/" + std::to_string(*trial) + "/log?offset=" +
                                                  std::to_string(offset));
        if (!r) return void(*code = 2);
        std::cout << r->body << std::flush;
        int64_t next = std::stoll(r->Header("X-Next-Offset").empty() ? "0" : r->Header("X-Next-Offset"));
        bool done = r->Header("X-Trial-Done") == "true";
        bool progressed = next > offset;
        offset = next;
        if (!*follow || (done && !progressed)) break;
        if (!progressed) {
          // Wait for this trial's next event (or a second) instead of spinning.
          http::Client events(client->base(), o->conn.token);
          auto start = std::chrono::steady_clock::now();
          events.Stream("/api/v1/events",
                        [&](std::string_view) { return std::chrono::steady_clock::now() - start < std::chrono::seconds(1); },
                        std::chrono::seconds(1));
        }
      }
    });
  }
  // nodes
  {
    auto o = std::make_shared<Common>();
    auto drain = std::make_shared<int64_t>(0);
    auto c = app.add_subcommand("nodes", "Show the fleet (or drain a node with --drain ID)");
    c->add_option("--drain", *drain, "stop giving new trials to this node");
    AddConn(c, o.get(), true);
    c->callback([=] {
      auto client = Connect(*o);
      if (*drain > 0) {
        auto r = Call(*client, "POST", "/api/v1/nodes/" + std::to_string(*drain) + "/drain");
        if (!r) return void(*code = 2);
        std::cout << r->dump() << "\n";
        return;
      }
      auto r = Call(*client, "GET", "/api/v1/nodes");
      if (!r) return void(*code = 2);
      if (o->format == "json") {
        std::cout << (*r)["items"].dump(2) << "\n";
        return;
      }
      std::vector<std::vector<std::string>> rows;
      for (auto& n : (*r)["items"]) {
        char age[32];
        snprintf(age, sizeof age, "%.1fs", n.value("heartbeat_age_s", 0.0));
        rows.push_back({Str(n["id"]), Str(n["name"]), Str(n["state"]), Str(n["hardware"]),
                        std::to_string(n["running"].size()), age, Str(n["reason"])});
      }
      if (o->format == "csv") {
        std::cout << "id,name,state,hardware,running,heartbeat_age,reason\n";
        for (auto& row : rows) {
          for (size_t i = 0; i < row.size(); ++i) std::cout << (i ? "," : "") << row[i];
          std::cout << "\n";
        }
        return;
      }
      cli::PrintTable({"NODE", "NAME", "STATE", "HARDWARE", "RUNNING", "HEARTBEAT", "REASON"}, rows);
    });
  }
}

}  // namespace gauntlet
