// Shared pieces of the client subcommands: server and token resolution, API calls, one-line errors,
// output formats (table, csv, markdown, json), terminal width of text, and a long-lived event stream.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/http.h"
#include "http/http_client.h"

namespace gauntlet::cli {

struct Conn {
  std::string server;  // --server, GAUNTLET_SERVER, the config file, or http://127.0.0.1:8080
  std::string token;   // --token, GAUNTLET_TOKEN, the config file
};

// The config file: $GAUNTLET_CONFIG, else $XDG_CONFIG_HOME/gauntlet/config, else
// ~/.config/gauntlet/config. Lines are `key = value` (server, token); '#' starts a comment.
std::string ConfigPath();

// Fills unset fields from the environment, then the config file, then defaults. Flags win over the
// environment, which wins over the file, so a one-off `--server` never needs the file edited.
void Resolve(Conn* c);

// Calls the API; on success returns the parsed body (null for an empty body). On failure prints one
// line to stderr naming the field at fault, e.g.
//   gauntlet: 422 Unprocessable Entity: parameters.mode: value 'x' is not declared for mode
// and returns nullopt. `status` receives the HTTP status (0 when unreachable).
std::optional<nlohmann::json> Call(http::Client& client, const std::string& method, const std::string& target,
                                   const std::string& body = {}, int* status = nullptr);
// The same for non-JSON answers (CSV, logs); Call parses what this returns.
std::optional<http::ClientResponse> CallRaw(http::Client& client, const std::string& method, const std::string& target,
                                            const std::string& body = {}, int* status = nullptr);

// Output formats. `table` is aligned text (coloured on a terminal), `csv` is RFC 4180, `markdown`
// is a GitHub table ready to paste into an issue.
using Rows = std::vector<std::vector<std::string>>;
void PrintTable(const std::vector<std::string>& head, const Rows& rows);
void PrintCsv(const std::vector<std::string>& head, const Rows& rows);
void PrintMarkdown(const std::vector<std::string>& head, const Rows& rows);
// Dispatches on "table", "csv" or "markdown".
void Print(const std::string& format, const std::vector<std::string>& head, const Rows& rows);
std::string MarkdownCell(const std::string& s);

// Columns `s` takes on a terminal: colour codes take none, emoji and CJK take two.
size_t DisplayWidth(const std::string& s);

// True if stdout is a terminal and NO_COLOR is unset (colours, progress bars).
bool IsTty();
// ANSI colour for a verdict on a terminal ("" when not a terminal).
std::string VerdictColor(const std::string& verdict);
std::string Reset();
std::string Str(const nlohmann::json& v);
// "1h02m", "3m07s", "12s".
std::string Duration(double seconds);

// Adds --server and --token to a subcommand.
void AddConnOptions(CLI::App* c, Conn* conn);

// The verdicts in display order (core/verdict.h), for columns and summaries.
const std::vector<std::string>& Verdicts();

// One long-lived Server-Sent Events connection (GET /api/v1/events?...) read on a background thread.
// Each event bumps a generation counter that callers wait on, so a follower sleeps until something
// changed instead of polling. If the stream breaks (daemon restart, overflow) it reconnects with
// ?since=<last id>, so no event in between is lost.
class EventWatch {
 public:
  EventWatch(std::string base, std::string token, std::string target);
  ~EventWatch();
  EventWatch(const EventWatch&) = delete;
  EventWatch& operator=(const EventWatch&) = delete;
  // Waits until the first connection is established (the subscription is live); false on timeout.
  bool WaitConnected(std::chrono::milliseconds timeout);
  // The number of events seen so far.
  uint64_t generation();
  // Waits until generation() > seen or `timeout` passes; returns generation().
  uint64_t Wait(uint64_t seen, std::chrono::milliseconds timeout);
  // The last event's data (parsed JSON; null before any).
  nlohmann::json last();
  // How many times the stream was opened (1 when it never broke).
  int connections();

 private:
  void Run();
  void Feed(std::string_view chunk);
  std::string base_, token_, target_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t gen_ = 0;
  int connections_ = 0;
  bool connected_ = false, stop_ = false, exited_ = false;
  int64_t last_id_ = 0;
  nlohmann::json last_;
  std::string buf_;
  std::unique_ptr<http::Client> stream_client_;
  std::thread thread_;
};

// Adds `gauntlet matrix` (daemon/cli_matrix.cc).
void AddMatrixCommand(CLI::App& app, int* code);

}  // namespace gauntlet::cli
