#include "cli/cli.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>

#include "cli/cli_common.h"
#include "core/yaml_json.h"

namespace gauntlet {
using nlohmann::json;
using cli::Call;
using cli::Str;

namespace {

struct Common {
  cli::Conn conn;
  std::string format = "table";
};

void AddConn(CLI::App* c, Common* o, std::vector<std::string> formats = {}) {
  cli::AddConnOptions(c, &o->conn);
  if (!formats.empty()) {
    std::string help;
    for (auto& f : formats) help += (help.empty() ? "" : ", ") + f;
    c->add_option("--format", o->format, "output: " + help)->check(CLI::IsMember(formats))->capture_default_str();
  }
}

std::unique_ptr<http::Client> Connect(Common& o) {
  cli::Resolve(&o.conn);
  return std::make_unique<http::Client>(o.conn.server, o.conn.token);
}

// Exit status of a finished sweep: 0 when every trial passed or was skipped, 1 otherwise.
bool Failed(const json& by_verdict) {
  for (auto& [v, n] : by_verdict.items())
    if (v != "passed" && v != "skipped" && n.get<int64_t>() > 0) return true;
  return false;
}

std::string CountsLine(const json& s, const char* sep = " ") {
  std::string out;
  for (auto& v : cli::Verdicts()) {
    int64_t n = s["by_verdict"].value(v, int64_t{0});
    if (n > 0) out += (out.empty() ? "" : sep) + cli::VerdictColor(v) + v + " " + std::to_string(n) + cli::Reset();
  }
  return out;
}

int64_t Running(const json& s) {
  return s["by_state"].value("running", int64_t{0}) + s["by_state"].value("leased", int64_t{0});
}

// Follows a sweep until it is finished. One event stream (GET /api/v1/events?sweep=ID) stays open
// for the whole wait; each event wakes the follower, which then reads the sweep's counts. The
// counts, not the events, are the truth: events only say "look now". Returns the final sweep JSON,
// or nullopt when the daemon could not be read for `patience`.
std::optional<json> FollowSweep(http::Client& client, const cli::Conn& conn, int64_t id, bool bar) {
  cli::EventWatch watch(conn.server, conn.token, "/api/v1/events?sweep=" + std::to_string(id));
  // Subscribe before the first read, so no change between the read and the subscription is lost.
  // Without a stream (a proxy that buffers SSE) the follower still works, by the fallback period.
  watch.WaitConnected(std::chrono::seconds(5));
  // Lease expiries and reused results are published without a sweep id, so they never reach this
  // filtered stream; re-read at least this often so such a change still shows up.
  const auto fallback = std::chrono::seconds(5);
  const auto patience = std::chrono::seconds(60);
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<int64_t> done0;
  auto last_ok = t0;
  std::string last_line;
  size_t last_width = 0;
  while (true) {
    const uint64_t seen = watch.generation();
    int status = 0;
    std::optional<json> s;
    {
      // A daemon restart (or a network blip) must not end a CI job's wait: retry until `patience`.
      auto r = client.Send("GET", "/api/v1/sweeps/" + std::to_string(id));
      if (r.ok() && r->status == 200) s = json::parse(r->body, nullptr, false);
      else if (r.ok()) status = r->status;
      if (s && s->is_discarded()) s.reset();
      if (!s && (status >= 400 && status < 500)) return Call(client, "GET", "/api/v1/sweeps/" + std::to_string(id));
    }
    auto now = std::chrono::steady_clock::now();
    if (!s) {
      if (now - last_ok > patience) return Call(client, "GET", "/api/v1/sweeps/" + std::to_string(id));
      watch.Wait(seen, std::chrono::seconds(1));
      continue;
    }
    last_ok = now;
    const int64_t total = (*s)["trials"].get<int64_t>(), done = (*s)["done"].get<int64_t>();
    const bool finished = (*s)["finished"].get<bool>();
    const double secs = std::chrono::duration<double>(now - t0).count();
    if (!done0) done0 = done;
    // ETA from the rate observed while following (not since the sweep began: it may have waited
    // in the queue for hours before this command started).
    std::optional<double> eta;
    if (done > *done0 && done < total) eta = secs / static_cast<double>(done - *done0) * static_cast<double>(total - done);
    if (bar) {
      const int width = 24;
      int fill = total ? static_cast<int>(width * done / total) : width;
      std::string line = "sweep " + std::to_string(id) + " [" + std::string(fill, '#') + std::string(width - fill, '-') +
                         "] " + std::to_string(done) + "/" + std::to_string(total);
      std::string counts = CountsLine(*s, " · ");
      if (!counts.empty()) line += "  " + counts;
      if (int64_t r = Running(*s)) line += "  running " + std::to_string(r);
      if (!finished) line += eta ? "  eta " + cli::Duration(*eta) : std::string("  eta --");
      // Pad over the previous line rather than \033[K, so the bar also redraws on dumb terminals.
      size_t w = cli::DisplayWidth(line);
      std::cout << "\r" << line << std::string(last_width > w ? last_width - w : 0, ' ') << std::flush;
      last_width = w;
    } else {
      json j = {{"sweep", id}, {"done", done}, {"trials", total}, {"finished", finished},
                {"by_verdict", (*s)["by_verdict"]}, {"by_state", (*s)["by_state"]}};
      std::string line = j.dump();  // eta varies every read; it is not a change by itself
      if (line != last_line) {
        j["elapsed_s"] = std::round(secs * 10) / 10;
        j["eta_s"] = eta ? json(std::round(*eta)) : json();
        std::cout << j.dump() << "\n" << std::flush;
      }
      last_line = line;
    }
    if (finished) {
      if (bar) {
        std::cout << "\n"
                  << "sweep " << id << " finished in " << cli::Duration(secs) << ": " << CountsLine(*s, ", ") << "\n";
        if (Failed((*s)["by_verdict"]))
          std::cout << "see the failures: gauntlet trials --sweep " << id << " --verdict VERDICT; the grid: gauntlet matrix --suite "
                    << Str((*s)["suite"]) << " --sweep " << id << "\n";
      }
      return s;
    }
    watch.Wait(seen, fallback);
  }
}

Result<json> ReadSweepFile(const std::string& file) {
  if (file == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), {});
    return YamlToJson(text);  // YAML is a superset of JSON
  }
  return ReadJsonOrYaml(file);
}

}  // namespace

void AddClientCommands(CLI::App& app, int* code) {
  // submit
  {
    auto o = std::make_shared<Common>();
    auto file = std::make_shared<std::string>();
    auto name = std::make_shared<std::string>();
    auto wait = std::make_shared<bool>(false);
    auto json_lines = std::make_shared<bool>(false);
    auto c = app.add_subcommand("submit", "Submit a sweep from a JSON or YAML file");
    c->footer(
        "Exit status: 0 submitted (with --wait: every trial passed or was skipped), 1 some trial failed "
        "(--wait), 2 error (bad file, refused by the daemon, daemon unreachable).");
    c->add_option("file", *file, "sweep request (JSON or YAML; '-' reads stdin)")->required();
    c->add_option("--name", *name, "name the sweep (overrides the file's name)");
    c->add_flag("--wait", *wait,
                "follow the sweep until it is finished: a progress bar on a terminal, one JSON line per change otherwise");
    c->add_flag("--json", *json_lines, "print JSON lines even on a terminal");
    AddConn(c, o.get());
    c->callback([=] {
      auto body = ReadSweepFile(*file);
      if (!body.ok()) {
        std::cerr << "gauntlet: " << body.status().message() << "\n";
        return void(*code = 2);
      }
      if (!body->is_object()) {
        std::cerr << "gauntlet: " << *file << ": a sweep is an object with at least \"suite\"\n";
        return void(*code = 2);
      }
      if (!name->empty()) (*body)["name"] = *name;
      auto client = Connect(*o);
      auto r = Call(*client, "POST", "/api/v1/sweeps", body->dump());
      if (!r) return void(*code = 2);
      const int64_t id = (*r)["id"].get<int64_t>();
      const bool bar = cli::IsTty() && !*json_lines;
      if (bar) std::cout << "sweep " << id << " submitted: " << (*r)["trials"] << " trials\n";
      else std::cout << r->dump() << "\n" << std::flush;
      if (!*wait) return;
      auto fin = FollowSweep(*client, o->conn, id, bar);
      if (!fin) return void(*code = 2);
      *code = Failed((*fin)["by_verdict"]) ? 1 : 0;
    });
  }
  // status
  {
    auto o = std::make_shared<Common>();
    auto sweep = std::make_shared<int64_t>(0);
    auto limit = std::make_shared<int>(50);
    auto wait = std::make_shared<bool>(false);
    auto json_lines = std::make_shared<bool>(false);
    auto c = app.add_subcommand("status", "Show sweeps (or one sweep) with progress and verdict counts");
    c->add_option("sweep", *sweep, "sweep id (default: the latest sweeps)");
    c->add_option("--limit", *limit, "how many sweeps to list")->capture_default_str();
    c->add_flag("--wait", *wait, "follow SWEEP until it is finished; exit status as `submit --wait`");
    c->add_flag("--json", *json_lines, "with --wait: JSON lines even on a terminal");
    AddConn(c, o.get(), {"table", "json", "csv", "markdown"});
    c->callback([=] {
      auto client = Connect(*o);
      if (*wait) {
        if (*sweep <= 0) {
          std::cerr << "gauntlet: status --wait needs a sweep id\n";
          return void(*code = 2);
        }
        auto fin = FollowSweep(*client, o->conn, *sweep, cli::IsTty() && !*json_lines);
        if (!fin) return void(*code = 2);
        return void(*code = Failed((*fin)["by_verdict"]) ? 1 : 0);
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
      if (o->format == "json") {
        std::cout << (*sweep > 0 ? items[0] : json(items)).dump(2) << "\n";
        return;
      }
      auto note = [](const json& s) {
        std::string n;
        if (s.contains("unmatched_targets") && !s["unmatched_targets"].empty())
          n = "no node for " + std::to_string(s["unmatched_targets"].size()) + " target(s)";
        if (s.contains("pruned") && s["pruned"].value("trials", int64_t{0}) > 0) {
          char buf[96];
          snprintf(buf, sizeof buf, "pruned %lld (%.1f GPU-h saved)", static_cast<long long>(s["pruned"]["trials"].get<int64_t>()),
                   s["pruned"].value("gpu_hours_saved", 0.0));
          n += (n.empty() ? "" : "; ") + std::string(buf);
        }
        return n;
      };
      cli::Rows rows;
      if (o->format == "csv") {
        // One column per verdict, so a script can read counts without parsing text.
        std::vector<std::string> head = {"id", "name", "suite", "trials", "done", "running", "finished"};
        for (auto& v : cli::Verdicts()) head.push_back(v);
        for (auto& s : items) {
          std::vector<std::string> r = {Str(s["id"]), Str(s["name"]), Str(s["suite"]), Str(s["trials"]), Str(s["done"]),
                                        std::to_string(Running(s)), s["finished"].get<bool>() ? "true" : "false"};
          for (auto& v : cli::Verdicts()) r.push_back(std::to_string(s["by_verdict"].value(v, int64_t{0})));
          rows.push_back(r);
        }
        cli::PrintCsv(head, rows);
        return;
      }
      for (auto& s : items)
        rows.push_back({Str(s["id"]), Str(s["name"]), Str(s["suite"]), Str(s["done"]) + "/" + Str(s["trials"]),
                        std::to_string(Running(s)), CountsLine(s, o->format == "markdown" ? ", " : " "), note(s)});
      cli::Print(o->format, {"SWEEP", "NAME", "SUITE", "DONE", "RUNNING", "VERDICTS", "NOTE"}, rows);
    });
  }
  // trials
  {
    auto o = std::make_shared<Common>();
    auto f = std::make_shared<std::map<std::string, std::string>>();
    auto params = std::make_shared<std::vector<std::string>>();
    auto limit = std::make_shared<int>(1000);
    auto c = app.add_subcommand("trials", "List trials, filtered as GET /api/v1/trials");
    c->add_option("--sweep", (*f)["sweep"], "sweep id");
    c->add_option("--suite", (*f)["suite"], "suite name");
    c->add_option("--state", (*f)["state"], "queued, leased, running or done");
    c->add_option("--verdict", (*f)["verdict"], "passed, unsupported, crashed, wrong_output, timeout, oom, ...");
    c->add_option("--hardware", (*f)["hardware"], "hardware class, e.g. 'NVIDIA H200 · sm_90 · x1'");
    c->add_option("--param", *params, "NAME=VALUE: only trials whose config has it (repeatable)");
    c->add_option("--limit", *limit, "at most this many trials")->capture_default_str();
    AddConn(c, o.get(), {"table", "json", "csv", "markdown"});
    c->callback([=] {
      std::string q;
      for (auto& [k, v] : *f)
        if (!v.empty()) q += "&" + k + "=" + http::UrlEncode(v);
      for (auto& p : *params) {
        auto eq = p.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::cerr << "gauntlet: --param: '" << p << "' is not NAME=VALUE\n";
          return void(*code = 2);
        }
        q += "&param." + http::UrlEncode(p.substr(0, eq)) + "=" + http::UrlEncode(p.substr(eq + 1));
      }
      auto client = Connect(*o);
      if (o->format == "csv") {
        // The daemon's CSV has one column per parameter; pass it through unchanged.
        auto r = cli::CallRaw(*client, "GET", "/api/v1/trials?format=csv&limit=" + std::to_string(std::max(1, *limit)) + q);
        if (!r) return void(*code = 2);
        std::cout << r->body;
        return;
      }
      json all = json::array();
      std::string after;
      while (static_cast<int>(all.size()) < *limit) {
        int page = std::min(*limit - static_cast<int>(all.size()), 1000);
        auto r = Call(*client, "GET", "/api/v1/trials?limit=" + std::to_string(page) + q + after);
        if (!r) return void(*code = 2);
        for (auto& t : (*r)["items"]) all.push_back(t);
        if ((*r)["next"].is_null()) break;
        after = "&after=" + (*r)["next"].dump();
      }
      if (o->format == "json") {
        std::cout << all.dump(2) << "\n";
        return;
      }
      cli::Rows rows;
      for (auto& t : all) {
        std::string config;
        for (auto& [k, v] : t["config"].items()) config += (config.empty() ? "" : " ") + k + "=" + Str(v);
        std::string v = Str(t["verdict"]);
        rows.push_back({Str(t["id"]), Str(t["sweep"]), Str(t["state"]), cli::VerdictColor(v) + v + cli::Reset(),
                        Str(t["signature"]), Str(t["hardware"]), config});
      }
      cli::Print(o->format, {"TRIAL", "SWEEP", "STATE", "VERDICT", "SIGNATURE", "HARDWARE", "CONFIG"}, rows);
    });
  }
  // suites
  {
    auto o = std::make_shared<Common>();
    auto name = std::make_shared<std::string>();
    auto c = app.add_subcommand("suites", "List suites, or show one suite's definition");
    c->add_option("name", *name, "suite name");
    AddConn(c, o.get(), {"table", "json", "csv", "markdown"});
    c->callback([=] {
      auto client = Connect(*o);
      if (!name->empty()) {
        auto s = Call(*client, "GET", "/api/v1/suites/" + http::UrlEncode(*name));
        if (!s) return void(*code = 2);
        // The definition is what a person wants to read or copy; --format json adds the metadata.
        std::cout << (o->format == "json" ? (*s).dump(2) : (*s)["definition"].dump(2)) << "\n";
        return;
      }
      auto s = Call(*client, "GET", "/api/v1/suites");
      if (!s) return void(*code = 2);
      if (o->format == "json") {
        std::cout << (*s)["items"].dump(2) << "\n";
        return;
      }
      cli::Rows rows;
      for (auto& i : (*s)["items"]) {
        std::string params;
        for (auto& [k, v] : i["parameters"].items()) params += (params.empty() ? "" : ", ") + k;
        rows.push_back({Str(i["name"]), Str(i["version"]), params, Str(i["description"])});
      }
      cli::Print(o->format, {"SUITE", "VERSION", "PARAMETERS", "DESCRIPTION"}, rows);
    });
  }
  // cancel
  {
    auto o = std::make_shared<Common>();
    auto sweep = std::make_shared<int64_t>(0);
    auto trial = std::make_shared<int64_t>(0);
    auto c = app.add_subcommand("cancel", "Cancel a sweep's unfinished trials (or one trial with --trial)");
    c->add_option("sweep", *sweep, "sweep id");
    c->add_option("--trial", *trial, "cancel this one trial instead");
    AddConn(c, o.get());
    c->callback([=] {
      if ((*sweep > 0) == (*trial > 0)) {
        std::cerr << "gauntlet: name a sweep id or --trial ID (one of them)\n";
        return void(*code = 2);
      }
      auto client = Connect(*o);
      std::string target = *trial > 0 ? "/api/v1/trials/" + std::to_string(*trial) + "/cancel"
                                      : "/api/v1/sweeps/" + std::to_string(*sweep) + "/cancel";
      auto r = Call(*client, "POST", target);
      if (!r) return void(*code = 2);
      r->erase("request");
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
    AddConn(c, o.get());
    c->callback([=] {
      auto client = Connect(*o);
      std::unique_ptr<cli::EventWatch> watch;
      if (*follow) {
        auto t = Call(*client, "GET", "/api/v1/trials/" + std::to_string(*trial));
        if (!t) return void(*code = 2);
        // One stream for the whole follow: the trial's sweep events wake the reader when the trial
        // changes state (and so when it ends).
        watch = std::make_unique<cli::EventWatch>(o->conn.server, o->conn.token,
                                                  "/api/v1/events?sweep=" + Str((*t)["sweep"]));
        watch->WaitConnected(std::chrono::seconds(5));
      }
      int64_t offset = 0;
      while (true) {
        const uint64_t seen = watch ? watch->generation() : 0;
        auto r = cli::CallRaw(*client, "GET", "/api/v1/trials/" + std::to_string(*trial) + "/log?offset=" +
                                                  std::to_string(offset));
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
  // nodes
  {
    auto o = std::make_shared<Common>();
    auto drain = std::make_shared<int64_t>(0);
    auto c = app.add_subcommand("nodes", "Show the fleet (or drain a node with --drain ID)");
    c->add_option("--drain", *drain, "stop giving new trials to this node (admin)");
    AddConn(c, o.get(), {"table", "json", "csv", "markdown"});
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
      cli::Rows rows;
      for (auto& n : (*r)["items"]) {
        char age[32];
        snprintf(age, sizeof age, "%.1fs", n.value("heartbeat_age_s", 0.0));
        rows.push_back({Str(n["id"]), Str(n["name"]), Str(n["state"]), Str(n["hardware"]),
                        std::to_string(n.value("running", json::array()).size()), age, Str(n.value("reason", json()))});
      }
      cli::Print(o->format, {"NODE", "NAME", "STATE", "HARDWARE", "RUNNING", "HEARTBEAT", "REASON"}, rows);
    });
  }
  cli::AddMatrixCommand(app, code);
  // completion: generated from the command tree, so it never falls behind a new flag.
  {
    auto shell = std::make_shared<std::string>("bash");
    auto c = app.add_subcommand("completion", "Print a shell completion script (bash)");
    c->footer("Install: gauntlet completion bash > ~/.local/share/bash-completion/completions/gauntlet\n"
              "or source scripts/gauntlet-completion.bash (the same script) from ~/.bashrc.");
    c->add_option("shell", *shell, "bash")->check(CLI::IsMember({"bash"}))->capture_default_str();
    const CLI::App* root = &app;
    c->callback([root] {
      // Choices come from the options' validators ("TEXT:{table,json,csv}"); options that name a
      // file or folder complete paths.
      static const std::set<std::string> kPathOpts = {"--db",      "--tokens",    "--inventory", "--workdir",
                                                      "--web",     "--suites",    "--port-file", "--preflight"};
      auto choices = [](const CLI::Option* op) {
        std::string t = op->get_type_name();
        auto a = t.find('{'), b = t.rfind('}');
        if (a == std::string::npos || b == std::string::npos || b < a) return std::string();
        std::string s = t.substr(a + 1, b - a - 1);
        for (auto& ch : s)
          if (ch == ',') ch = ' ';
        return s;
      };
      auto opts_of = [&](const CLI::App* a, std::string* words, std::string* cases, const std::string& sub) {
        for (const CLI::Option* op : a->get_options()) {
          if (op->get_positional()) continue;
          for (auto& l : op->get_lnames()) *words += " --" + l;
          for (auto& s : op->get_snames()) *words += " -" + s;
          if (op->get_expected_max() == 0) continue;  // a flag takes no value
          std::string ch = choices(op);
          for (auto& l : op->get_lnames()) {
            std::string key = (sub.empty() ? "" : sub + ":") + "--" + l;
            if (!ch.empty()) *cases += "    " + key + ") COMPREPLY=($(compgen -W \"" + ch + "\" -- \"$cur\")); return;;\n";
            else if (kPathOpts.count("--" + l) || (sub == "classify" && l == "suite"))
              *cases += "    " + key + ") COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n";
            else *cases += "    " + key + ") return;;\n";  // a free value: offer nothing rather than subcommands
          }
        }
      };
      std::string cmds, top_opts, cases, sub_opts;
      opts_of(root, &top_opts, &cases, "");
      for (const CLI::App* sub : root->get_subcommands([](const CLI::App*) { return true; })) {
        const std::string n = sub->get_name();
        cmds += (cmds.empty() ? "" : " ") + n;
        std::string words;
        opts_of(sub, &words, &cases, n);
        sub_opts += "    " + n + ") opts=\"" + words.substr(words.empty() ? 0 : 1) + "\";;\n";
      }
      std::cout << "# bash completion for gauntlet. Generated by `gauntlet completion bash`: do not edit by hand.\n"
                   "# Use: source this file from ~/.bashrc, or copy it to\n"
                   "# ~/.local/share/bash-completion/completions/gauntlet\n"
                   "_gauntlet() {\n"
                   "  local cur prev sub i opts\n"
                   "  COMPREPLY=()\n"
                   "  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
                   "  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                   "  local cmds=\"" << cmds << "\"\n"
                   "  sub=\"\"\n"
                   "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
                   "    if [[ \" $cmds \" == *\" ${COMP_WORDS[i]} \"* ]]; then sub=\"${COMP_WORDS[i]}\"; break; fi\n"
                   "  done\n"
                   "  case \"${sub:+$sub:}$prev\" in\n"
                << cases
                << "  esac\n"
                   "  if [[ -z $sub ]]; then\n"
                   "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \""
                << top_opts.substr(top_opts.empty() ? 0 : 1)
                << "\" -- \"$cur\"))\n"
                   "    else COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\")); fi\n"
                   "    return\n"
                   "  fi\n"
                   "  case \"$sub\" in\n"
                << sub_opts
                << "  esac\n"
                   "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi\n"
                   "  case \"$sub\" in\n"
                   "    submit|classify) COMPREPLY=($(compgen -f -- \"$cur\"));;\n"
                   "  esac\n"
                   "}\n"
                   "complete -o filenames -F _gauntlet gauntlet\n";
    });
  }
}

}  // namespace gauntlet
