// `gauntlet serve`: the daemon process (store, suites, scheduler, HTTP server, signals).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gauntlet::app {

// gauntlet serve's flags (app/main.cc).
struct ServeOptions {
  std::string db = "./var/gauntlet.db";
  std::string listen = "127.0.0.1:8080";
  std::string suites;      // default: the built-in suites/ folder
  std::string tokens;      // tokens file; empty: no tokens
  bool insecure = false;   // allow a non-loopback bind without tokens
  std::string tls_cert, tls_key;  // PEM files: serve HTTPS (both or neither)
  std::string web;         // dashboard folder; default: the built-in web/
  std::string port_file;   // write the bound port here once listening (for tests and scripts)
  int threads = 4;
  int max_connections = 0;  // 0: from the descriptor limit (net::ServerOptions)
  int max_streams = 0;      // 0: a quarter of max_connections (net::ServerOptions)
  int64_t lease_ttl_ms = 30000;
  int64_t heartbeat_ms = 5000;
  int64_t offline_after_ms = 30000;
  int quarantine_after = 3;
  int64_t log_cap_mb = 16;
  int64_t query_timeout_ms = 10000;  // heavy reads (matrix, compare, regressions, trials): deadline
  int64_t query_max_rows = 2000000;  //   and the rows one may read (docs/API.md "Query bounds")
  bool local_worker = false;  // also start one `gauntlet worker` beside the daemon
  std::string exe;            // this executable (for the local worker)
  std::string config;         // --config: webhooks and links (YAML or JSON); empty: none
  std::vector<std::string> webhooks;  // --webhook URL[,EVENT...], repeated
};

// Runs until SIGINT/SIGTERM; returns the process exit code (0 clean stop, 2 bad configuration). Call
// from main's thread before any other thread exists: it blocks the stop signals for all threads.
int RunServe(const ServeOptions& opts);

// Splits "host:port" ("[::1]:8080" for IPv6; port 0 allowed); false if malformed. Pure.
bool SplitHostPort(const std::string& s, std::string* host, uint16_t* port);
// True for 127.0.0.0/8 (any host text starting "127."), ::1 and "localhost". Pure.
bool IsLoopback(const std::string& host);

}  // namespace gauntlet::app
