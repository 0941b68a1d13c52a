#include "workers/worker_cli.h"

#include <csignal>
#include <iostream>
#include <memory>

#include "core/suite.h"
#include "core/utf8.h"
#include "core/yaml_json.h"
#include "classifier/classifier.h"
#include "workers/worker.h"

namespace gauntlet::worker {
using classifier::Classification;
using classifier::Classifier;
using classifier::ClassifyFile;
using classifier::ExitInfo;

namespace {
std::optional<int> ParseSignal(const std::string& s) {
  static const std::map<std::string, int> k = {{"SIGSEGV", SIGSEGV}, {"SIGABRT", SIGABRT}, {"SIGKILL", SIGKILL},
                                               {"SIGTERM", SIGTERM}, {"SIGBUS", SIGBUS},   {"SIGFPE", SIGFPE},
                                               {"SIGILL", SIGILL},   {"SIGINT", SIGINT},   {"SIGHUP", SIGHUP}};
  std::string n = s;
  for (auto& c : n) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  if (n.rfind("SIG", 0) != 0) n = "SIG" + n;
  auto it = k.find(n);
  if (it != k.end()) return it->second;
  try {
    return std::stoi(s);
  } catch (...) {
    return std::nullopt;
  }
}

void AddClassifyCommand(CLI::App& app, int* code);
}  // namespace

void AddWorkerCommands(CLI::App& app, int* code) {
  auto o = std::make_shared<WorkerOptions>();
  auto labels = std::make_shared<std::string>();
  auto w = app.add_subcommand("worker", "Run a worker agent on this host (GPU node)");
  w->add_option("--server", o->server, "daemon URL")->capture_default_str()->envname("GAUNTLET_SERVER");
  w->add_option("--token", o->token, "worker token")->envname("GAUNTLET_TOKEN");
  w->add_option("--ca-file", o->ca_file, "PEM CA certificates to trust for an https:// server (default: the system's)")
      ->envname("GAUNTLET_CA_FILE");
  w->add_option("--name", o->name, "node name (default: host name)");
  w->add_option("--labels", *labels, "k=v,... labels that suites and targets can ask for");
  w->add_option("--inventory", o->inventory_file, "declare the GPUs (JSON/YAML) instead of discovering them via NVML");
  w->add_option("--workdir", o->workdir, "folder for trial work directories")->capture_default_str();
  w->add_option("--max-trials", o->max_trials, "trials at once (default: one per GPU, CPU count without GPUs)");
  w->add_option("--pass-env", o->pass_env, "worker environment variables passed to stages (repeatable)");
  w->add_option("--trial-users", o->trial_users,
                "run each trial as a user of its own (auto: when root and its user can run sh and python3; on; off)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  w->add_option("--trial-uids", o->trial_uids, "the user ids trials run as, FIRST-LAST (no accounts needed)")
      ->capture_default_str();
  w->add_option("--trial-namespaces", o->trial_namespaces,
                "give each trial its own mount and PID namespaces: a private /tmp, its own /proc (auto: where trial "
                "users are on and the kernel allows; on; off)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  w->add_option("--trial-share", o->trial_share,
                "a folder under /tmp that trials still see in their private /tmp (repeatable; the workdir always is)");
  w->add_flag("--require-limits", o->require_limits,
              "refuse stages that declare limits (memory_mb, pids) this node cannot enforce; they go back to run elsewhere");
  w->add_option("--kill-grace-ms", o->kill_grace_ms, "SIGTERM-to-SIGKILL grace for stopped stages")->capture_default_str();
  w->add_option("--drain-timeout-ms", o->drain_timeout_ms, "on SIGTERM, how long running trials may go on")
      ->capture_default_str();
  w->add_option("--containment", o->containment,
                "how stages are contained: auto (a cgroup v2 per stage where the host allows, plus the subreaper "
                "keeper) or subreaper (the keeper alone)")
      ->check(CLI::IsMember({"auto", "subreaper"}))
      ->capture_default_str();
  w->add_option("--gpu-free-wait-s", o->gpu_free_wait_s,
                "after a trial, how long its GPUs may take to show no process (NVML) before they are held back")
      ->capture_default_str();
  w->add_option("--wait-s", o->wait_s, "lease long-poll length")->capture_default_str();
  w->add_option("--preflight", o->preflight, "auto (gauntlet-kernels preflight where GPUs exist), off, or a program")
      ->capture_default_str();
  w->add_option("--preflight-period-s", o->preflight_period_s, "re-run preflight this often when idle (0: never)")
      ->capture_default_str();
  w->add_flag("--exit-when-idle", o->exit_when_idle, "exit once idle for --idle-exit-s (for batch-launched workers)");
  w->add_option("--idle-exit-s", o->idle_exit_s, "idle time before --exit-when-idle exits")->capture_default_str();
  w->callback([=] {
    std::string rest = *labels;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string kv = rest.substr(0, comma);
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "gauntlet worker: --labels is k=v,k=v ('" << kv << "' is not)\n";
        *code = 2;
        return;
      }
      o->labels[kv.substr(0, eq)] = kv.substr(eq + 1);
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
    *code = RunWorker(*o);
  });
  AddClassifyCommand(app, code);
}

namespace {
// `gauntlet classify`: one log judged as a worker judges a stage's, to try a suite's signature rules.
void AddClassifyCommand(CLI::App& app, int* code) {
  auto file = std::make_shared<std::string>();
  auto exit_code = std::make_shared<int>(-1);
  auto sig = std::make_shared<std::string>();
  auto suite = std::make_shared<std::string>();
  auto timed_out = std::make_shared<bool>(false);
  auto c = app.add_subcommand("classify", "Classify a log file: prints {\"verdict\", \"signature\", \"evidence\"} (+ \"rank\" when known)");
  c->add_option("file", *file, "log file ('-' for stdin)")->required();
  c->add_option("--exit-code", *exit_code, "the process's exit code");
  c->add_option("--signal", *sig, "the signal that ended it (SIGSEGV, 11, ...)");
  c->add_flag("--timed-out", *timed_out, "the stage was stopped at its timeout");
  c->add_option("--suite", *suite, "a suite file (JSON/YAML) whose signature rules apply first");
  c->callback([=] {
    ExitInfo ei;
    if (*exit_code >= 0) ei.exit_code = *exit_code;
    if (!sig->empty()) {
      auto s = ParseSignal(*sig);
      if (!s) {
        std::cerr << "gauntlet classify: unknown signal '" << *sig << "'\n";
        *code = 2;
        return;
      }
      ei.signal = *s;
    }
    ei.timed_out = *timed_out;
    std::vector<SignatureRule> rules;
    if (!suite->empty()) {
      auto j = ReadJsonOrYaml(*suite);
      if (!j.ok()) {
        std::cerr << "gauntlet classify: " << j.status().message() << "\n";
        *code = 2;
        return;
      }
      auto parsed = ParseSignatureRules(j->value("signatures", nlohmann::json::array()));
      if (!parsed.ok()) {
        std::cerr << "gauntlet classify: " << *suite << ": " << parsed.status().field() << ": "
                  << parsed.status().message() << "\n";
        *code = 2;
        return;
      }
      rules = std::move(*parsed);
    }
    try {
      Classification r;
      if (*file == "-") {
        Classifier cl(rules);
        char buf[1 << 16];
        while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) cl.Feed(std::string_view(buf, std::cin.gcount()));
        r = cl.Finish(ei);
      } else {
        r = ClassifyFile(*file, ei, rules);
      }
      std::cout << SafeDump(ToJson(r)) << "\n";
    } catch (const std::exception& e) {
      std::cerr << "gauntlet classify: " << e.what() << "\n";
      *code = 2;
    }
  });
}
}  // namespace

}  // namespace gauntlet::worker
