// The `gauntlet` executable: one binary, subcommands as nomad/consul do (docs/DESIGN.md "Command line").
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <iostream>
#include <random>

#include "core/self_exe.h"
#include "http/auth.h"
#include "cli/cli.h"
#include "app/serve.h"
#include "app/store_commands.h"
#include "slurm/slurm.h"
#include "workers/worker_cli.h"

int main(int argc, char** argv) {
  CLI::App app{"Gauntlet: finds which backend configurations of GPU software survive on which hardware"};
  app.set_version_flag("--version", GAUNTLET_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // --log-level works after the subcommand too (gauntlet serve --log-level debug)
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  int code = 0;

  gauntlet::app::ServeOptions so;
  so.exe = gauntlet::SelfExe(argv[0]);
  auto serve = app.add_subcommand("serve", "Run the daemon: store, scheduler, REST API and dashboard");
  serve->add_option("--db", so.db, "SQLite file (the whole state)")->capture_default_str();
  serve->add_option("--listen", so.listen, "HOST:PORT to listen on (port 0: any free port)")->capture_default_str();
  serve->add_option("--suites", so.suites, "folder of suites to load at start (default: the built-in suites/)");
  serve->add_option("--tokens", so.tokens, "tokens file (ROLE sha256:HEX [NAME] per line); see `gauntlet token`");
  serve->add_flag("--insecure", so.insecure, "allow a non-loopback address without tokens");
  serve->add_option("--tls-cert", so.tls_cert, "PEM certificate chain: serve HTTPS (with --tls-key)");
  serve->add_option("--tls-key", so.tls_key, "PEM private key of --tls-cert");
  serve->add_option("--web", so.web, "dashboard folder (default: the built-in web/)");
  serve->add_option("--port-file", so.port_file, "write the bound port to this file once listening");
  serve->add_option("--threads", so.threads, "HTTP I/O threads, and as many handler-pool threads for reads")
      ->capture_default_str();
  serve->add_option("--max-connections", so.max_connections,
                    "connections open at once (default 0: the descriptor limit less a reserve)")
      ->capture_default_str();
  serve->add_option("--max-streams", so.max_streams,
                    "event streams open at once, inside --max-connections (default 0: a quarter of it)")
      ->capture_default_str();
  serve->add_option("--lease-ttl-ms", so.lease_ttl_ms, "a lease without heartbeats dies after this")->capture_default_str();
  serve->add_option("--heartbeat-ms", so.heartbeat_ms, "heartbeat period workers are told to use")->capture_default_str();
  serve->add_option("--offline-after-ms", so.offline_after_ms, "a silent node goes offline after this")->capture_default_str();
  serve->add_option("--quarantine-after", so.quarantine_after, "infra errors in a row before a node is quarantined")
      ->capture_default_str();
  serve->add_option("--log-cap-mb", so.log_cap_mb, "log bytes kept per trial (head and tail beyond)")->capture_default_str();
  serve->add_option("--query-timeout-ms", so.query_timeout_ms,
                    "a matrix, compare, regressions or trials query running longer is stopped (503)")
      ->capture_default_str();
  serve->add_option("--query-max-rows", so.query_max_rows, "rows one such query may read, else 422")
      ->capture_default_str();
  serve->add_flag("--local-worker", so.local_worker, "also run one worker on this host");
  serve->add_option("--config", so.config, "daemon settings file (YAML or JSON): webhooks, public_url; see USER_GUIDE");
  serve->add_option("--webhook", so.webhooks,
                    "post events to this URL (repeatable): URL[,EVENT...]; secret from $GAUNTLET_WEBHOOK_SECRET");
  serve->callback([&] { code = gauntlet::app::RunServe(so); });

  auto token = app.add_subcommand("token", "Make a new API token and print its tokens-file line");
  std::string role = "read", token_name;
  token->add_option("--role", role, "read, submit, worker or admin")->check(CLI::IsMember({"read", "submit", "worker", "admin"}));
  token->add_option("--name", token_name, "a label for the token");
  token->callback([&] {
    std::random_device rd;
    std::string t = "gt_";
    static const char* kAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int i = 0; i < 40; ++i) t += kAlphabet[rd() % 62];
    std::cout << "token: " << t << "\n"
              << "tokens-file line: " << role << " sha256:" << gauntlet::http::Sha256Hex(t)
              << (token_name.empty() ? "" : " " + token_name) << "\n";
  });

  gauntlet::cli::AddClientCommands(app, &code);
  gauntlet::worker::AddWorkerCommands(app, &code);
  gauntlet::slurm::AddSlurmCommand(app, &code);
  gauntlet::app::AddStoreCommands(app, &code);

  app.parse_complete_callback([&] {
    auto logger = spdlog::stderr_color_mt("gauntlet");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(log_level));
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return gauntlet::cli::UsageError(app, e, argc, argv);
  }
  return code;
}
