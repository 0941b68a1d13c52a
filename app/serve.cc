#include "app/serve.h"

#include <arpa/inet.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "http/auth.h"
#include "api/handlers.h"
#include "app/webhook_sender.h"
#include "app/webhook_config.h"
#include "daemon/notifier.h"
#include "net/http_server.h"
#include "daemon/coordinator.h"
#include "daemon/events.h"
#include "core/bundle.h"
#include "core/self_exe.h"
#include "core/stop_signals.h"
#include "daemon/suite_loader.h"
#include "store/store.h"

extern char** environ;

namespace gauntlet::app {
namespace fs = std::filesystem;

bool SplitHostPort(const std::string& s, std::string* host, uint16_t* port) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 >= s.size()) return false;
  *host = s.substr(0, colon);
  if (host->size() > 1 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  try {
    int p = std::stoi(s.substr(colon + 1));
    if (p < 0 || p > 65535) return false;
    *port = static_cast<uint16_t>(p);
  } catch (const std::exception&) {
    return false;
  }
  return !host->empty();
}

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  // An IPv4 address in 127.0.0.0/8, not any name that starts "127." (127.example.com is not local).
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

namespace {
// `token`: the worker's credential when the daemon requires tokens (made at start, in memory only),
// passed in the environment (GAUNTLET_TOKEN), never on the command line where `ps` shows it.
pid_t SpawnLocalWorker(const ServeOptions& o, uint16_t port, bool tls, const std::string& token) {
  // Over TLS the local worker checks the certificate as any client does: it must name localhost,
  // and be trusted by the system or be its own CA (a self-signed one).
  std::string url = (tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port);
  std::string workdir = (fs::path(o.db).parent_path() / "work").string();
  if (workdir == "work") workdir = "./var/work";
  std::vector<std::string> args = {o.exe, "worker", "--server", url, "--workdir", workdir, "--name", "local"};
  if (tls) args.insert(args.end(), {"--ca-file", o.tls_cert});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (token.empty() || std::string_view(*e).rfind("GAUNTLET_TOKEN=", 0) != 0) env_text.push_back(*e);
  if (!token.empty()) env_text.push_back("GAUNTLET_TOKEN=" + token);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, o.exe.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) {
    spdlog::error("could not start the local worker ({})", o.exe);
    return 0;
  }
  spdlog::info("local worker started (pid {})", pid);
  return pid;
}

// The built-in `name` folder (web, suites): `flag` when given, else PREFIX/share/gauntlet/NAME beside
// the executable (core/self_exe.h), so an installed binary works from any folder. Symlinks are
// resolved: in the build tree the path is the source folder's own, as the suites' source_dir was.
std::string BuiltInDir(const std::string& flag, const std::string& name) {
  if (!flag.empty()) return flag;
  const std::string data = SelfDataDir();
  const fs::path dir = data.empty() ? fs::path(name) : fs::path(data) / name;
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(dir, ec);
  return (ec ? dir : resolved).string();
}

// Loads --tokens into *auth, with a fresh worker token of the local worker's own in *local_token
// when it runs; without tokens, only a loopback listener (or --insecure) is allowed. False after
// printing why the daemon cannot start.
bool LoadAuth(const ServeOptions& o, const std::string& host, std::optional<http::Auth>* auth, std::string* local_token) {
  if (o.tokens.empty()) {
    if (IsLoopback(host) || o.insecure) return true;
    std::cerr << "gauntlet serve: refusing to listen on " << host
              << " without --tokens: anyone who can reach it could submit work. Give --tokens FILE, or --insecure "
                 "if this network is trusted.\n";
    return false;
  }
  auto a = http::Auth::Load(o.tokens);
  if (!a.ok()) {
    std::cerr << "gauntlet serve: " << a.status().message() << "\n";
    return false;
  }
  *auth = std::move(*a);
  // The local worker is this daemon's own: it gets a worker token of its own, not one from the
  // file (which may hold none), so `--tokens FILE --local-worker` works as `--local-worker` does.
  if (o.local_worker) {
    *local_token = http::NewSecret("gw_local_");
    (*auth)->AddSecret(http::Role::kWorker, *local_token, "local-worker");
  }
  return true;
}

// The listener's options from the flags.
net::ServerOptions ServerOptionsOf(const ServeOptions& o, const std::string& host, uint16_t port) {
  net::ServerOptions so;
  so.host = host;
  so.port = port;
  so.threads = std::max(1, o.threads);
  so.max_connections = o.max_connections;
  so.max_streams = o.max_streams;
  so.large_bodies = {{"/api/v1/bundles/", kMaxBundleBytes}};  // a suite's files, the one body over 1 MiB
  so.tls_cert = o.tls_cert;
  so.tls_key = o.tls_key;
  return so;
}

// Writes the bound port to `path` through a rename, so a reader never sees half a number.
void WritePortFile(const std::string& path, uint16_t port) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  fs::rename(tmp, path);
}

// Stops the local worker: SIGTERM, a minute to drain (finishing or handing back its trials), then
// SIGKILL; returns once it is reaped.
void StopLocalWorker(pid_t worker) {
  kill(worker, SIGTERM);
  int st = 0;
  for (int i = 0; i < 600 && waitpid(worker, &st, WNOHANG) == 0; ++i) usleep(100 * 1000);
  if (waitpid(worker, &st, WNOHANG) == 0) {
    kill(worker, SIGKILL);
    waitpid(worker, &st, 0);
  }
}
}  // namespace

int RunServe(const ServeOptions& o) {
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(o.listen, &host, &port)) {
    std::cerr << "gauntlet serve: --listen is HOST:PORT (e.g. 127.0.0.1:8080), not '" << o.listen << "'\n";
    return 2;
  }
  std::optional<http::Auth> auth;
  std::string local_worker_token;
  if (!LoadAuth(o, host, &auth, &local_worker_token)) return 2;
  auto hooks = LoadWebhookConfig(o.config, o.webhooks, "");
  if (!hooks.ok()) {
    std::cerr << "gauntlet serve: " << hooks.status().message() << "\n";
    return 2;
  }
  sigset_t stop_set = BlockStopSignals();

  if (o.db != ":memory:") {
    std::error_code ec;
    auto parent = fs::path(o.db).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
  }
  auto store = store::Store::Open(o.db);
  if (!store.ok()) {
    std::cerr << "gauntlet serve: cannot open " << o.db << ": " << store.status().message() << "\n";
    return 2;
  }
  (*store)->SetQueryLimits(store::QueryLimits{std::max<int64_t>(0, o.query_timeout_ms), std::max<int64_t>(0, o.query_max_rows)});
  const std::string suites_dir = BuiltInDir(o.suites, "suites");
  if (auto loaded = daemon::LoadSuitesDir(suites_dir, **store); !loaded.ok()) {
    std::cerr << "gauntlet serve: suites: " << loaded.status().message() << "\n";
    return 2;
  } else {
    for (auto& s : *loaded)
      if (!s.error.empty()) spdlog::error("suite file skipped: {}", s.error);
      else spdlog::info("suite {} v{} from {}{}", s.name, s.version, s.file, s.created ? " (new version)" : "");
  }
  daemon::EventBus events;
  daemon::CoordinatorOptions co;
  co.sched.lease_ttl_ms = o.lease_ttl_ms;
  co.sched.offline_after_ms = o.offline_after_ms;
  co.sched.quarantine_after = o.quarantine_after;
  co.heartbeat_ms = o.heartbeat_ms;
  co.log_cap = o.log_cap_mb << 20;
  co.tick_ms = std::clamp<int64_t>(o.lease_ttl_ms / 10, 20, 1000);
  daemon::Coordinator coord(**store, events, co);
  const std::string web_dir = BuiltInDir(o.web, "web");
  if (std::error_code ec; !fs::is_directory(web_dir, ec))
    spdlog::warn("dashboard folder {} does not exist: / answers 404 (give --web DIR)", web_dir);
  api::Context ctx{**store, coord, events, web_dir, store::NowMs()};
  // Without tokens on loopback, the one thing that can still reach the daemon unasked is a web page
  // in the user's browser: the router refuses cross-site requests then.
  http::Router router(api::Routes(ctx), auth ? &*auth : nullptr, !auth && IsLoopback(host), api::NodeCredentialsOf(ctx));
  const net::ServerOptions so = ServerOptionsOf(o, host, port);
  const bool tls = !o.tls_cert.empty();
  if (!tls && !IsLoopback(host))
    spdlog::warn("listening on {} without TLS: tokens and results travel in clear text; give --tls-cert and "
                 "--tls-key", host);
  std::unique_ptr<net::Server> server;
  try {
    server = std::make_unique<net::Server>(so, router);
  } catch (const std::exception& e) {
    std::cerr << "gauntlet serve: " << e.what() << "\n";
    return 2;
  }
  const uint16_t bound = server->port();
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::cout << "Gauntlet " << GAUNTLET_VERSION << " is serving " << o.db << "\n"
            << "Dashboard: " << (tls ? "https://" : "http://") << shown << ":" << bound << "/\n"
            << std::flush;
  if (!o.port_file.empty()) WritePortFile(o.port_file, bound);
  // Webhooks: links point at public_url, else at this listener.
  if (hooks->notifier.public_url.empty()) hooks->notifier.public_url = (tls ? "https://" : "http://") + shown + ":" + std::to_string(bound);
  WebhookSender sender(**store, hooks->sender);
  daemon::Notifier notifier(**store, events, hooks->notifier, [&sender] { sender.Wake(); });
  if (!hooks->sender.targets.empty()) spdlog::info("webhooks: {} receiver(s)", hooks->sender.targets.size());
  pid_t worker = o.local_worker ? SpawnLocalWorker(o, bound, tls, local_worker_token) : 0;

  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_set, &sig);
    spdlog::info("{}: draining and stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    // A long query must not hold the drain: every bounded read ends now, each answering 503.
    (*store)->StopQueries();
    // The local worker drains first (finishing or handing back its trials) while the server can
    // still take its reports.
    if (worker > 0) StopLocalWorker(worker);
    worker = 0;
    events.CloseAll();
    server->Stop();
  });
  server->Run();
  notifier.Stop();
  sender.Stop();
  coord.Stop();
  signals.join();
  spdlog::info("stopped cleanly");
  return 0;
}

}  // namespace gauntlet::app
