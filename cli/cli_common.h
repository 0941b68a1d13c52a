// Shared pieces of the client subcommands: server and token resolution, API calls, one-line errors,
// output formats (table, csv, markdown, json), terminal width of text, and a long-lived event stream.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/text_width.h"
#include "net/client_config.h"
#include "http/http.h"
#include "net/http_client.h"
#include "http/sse_reader.h"

namespace gauntlet::cli {

// Adds --server and --token to `c`, which writes them into *conn when it parses: *conn must outlive
// the parse.
void AddConnOptions(CLI::App* c, net::Conn* conn);

// What a client subcommand parses besides its own flags: the daemon and, for listing commands, the
// output format ("table" unless --format says otherwise).
struct ClientOptions {
  net::Conn conn;
  std::string format = "table";
};
// Adds --server and --token to `c`, and --format limited to `formats` when that is not empty (its help
// lists them in that order). As AddConnOptions, *o must outlive the parse.
void AddClientOptions(CLI::App* c, ClientOptions* o, const std::vector<std::string>& formats = {});
// Resolves o->conn and returns a client for it, owned by the caller; use it from one thread only.
std::unique_ptr<net::Client> Connect(ClientOptions& o);

// Calls the API; on success returns the parsed body (null for an empty body). On failure prints one
// line to stderr naming the field at fault, e.g.
//   gauntlet: 422 Unprocessable Entity: parameters.mode: value 'x' is not declared for mode
// and returns nullopt. `status` receives the HTTP status (0 when unreachable). Uses `client` on the
// calling thread (net::Client is one per thread).
std::optional<nlohmann::json> Call(net::Client& client, const std::string& method, const std::string& target,
                                   const std::string& body = {}, int* status = nullptr);
// The same for non-JSON answers (CSV, logs) or bodies (`content_type`, e.g. a YAML suite): the whole
// response, or nullopt after the one-line error. Call parses what this returns.
std::optional<net::ClientResponse> CallRaw(net::Client& client, const std::string& method, const std::string& target,
                                            const std::string& body = {}, int* status = nullptr,
                                            const std::string& content_type = "application/json");

// Output formats, written to std::cout (so from one thread at a time). `table` is aligned text
// (coloured on a terminal), `csv` is RFC 4180, `markdown` is a GitHub table ready to paste into an issue.
using Rows = std::vector<std::vector<std::string>>;
// `head`, then `rows`, in columns as wide as their widest cell (DisplayWidth); trailing blanks trimmed.
// With `max_width` > 0 the columns from `keep` on are narrowed, widest first, until a line fits in
// that many columns, and cells are cut (CutToWidth) to their column, so a terminal never wraps a
// line mid-cell; the first `keep` columns (row keys) stay whole. A table that cannot fit even with
// every column at its narrowest is wrapped instead: each row a block of "head: cell" lines, whole.
void PrintTable(const std::vector<std::string>& head, const Rows& rows, size_t max_width = 0, size_t keep = 0);
// `head`, then `rows`, one CSV record each.
void PrintCsv(const std::vector<std::string>& head, const Rows& rows);
// `head`, a |---| separator, then `rows`; each cell escaped by MarkdownCell.
void PrintMarkdown(const std::vector<std::string>& head, const Rows& rows);
// Dispatches on "csv" or "markdown"; anything else prints a table fitted to TerminalWidth().
void Print(const std::string& format, const std::vector<std::string>& head, const Rows& rows);
// `s` as one Markdown table cell: '|' escaped, line breaks turned into spaces. Pure.
std::string MarkdownCell(const std::string& s);

// DisplayWidth and CutToWidth (core/text_width.h): the matrix's cell texts, which the daemon's
// Markdown writes too, are cut by the same measure.
using gauntlet::CutToWidth;
using gauntlet::DisplayWidth;
// The width of the terminal stdout writes to: $COLUMNS when it is a positive number (a script, or a
// shell that exports it, can set it), else the terminal's own (TIOCGWINSZ on stdout), else 0 (not a
// terminal: nothing needs cutting), or 0 after SetWholeCells (--wide). Asked anew each call.
size_t TerminalWidth();
// --wide: every table of this command prints its cells whole, wider than the terminal if need be
// (TerminalWidth answers 0). Process-wide: one command runs per process.
void SetWholeCells(bool whole);

// True if stdout is a terminal and NO_COLOR is unset (colours, progress bars); asked anew each call.
bool IsTty();
// ANSI colour for a verdict on a terminal, chosen by its family in core/verdict.h (unknown verdicts
// read as bad); "" when not a terminal or for an empty verdict.
std::string VerdictColor(const std::string& verdict);
// The code that ends a VerdictColor ("" when not a terminal).
std::string Reset();
// A JSON value as a table cell reads it (core/json_text.h): strings as they are, null empty. Pure.
std::string Str(const nlohmann::json& v);
// "1h02m", "3m07s", "12s": seconds rounded, negatives as 0s. Pure.
std::string Duration(double seconds);

// The verdicts' names in display order (core/verdict.h), for columns and summaries. A static list,
// built once; safe from any thread.
const std::vector<std::string>& Verdicts();

// One long-lived Server-Sent Events connection (GET /api/v1/events?...) read on a background thread.
// Each event bumps a generation counter that callers wait on, so a follower sleeps until something
// changed instead of polling. If the stream breaks (daemon restart, overflow) it reconnects with
// ?since=<last id>, so no event in between is lost.
// Threads: the constructor starts the reader thread, which alone uses the stream's own net::Client.
// Every public method takes the one mutex and may be called from any thread, concurrently; the
// destructor must not race them (the owner destroys it once no other thread calls it).
class EventWatch {
 public:
  // Starts the reader thread on GET `target` of `base` (with `token`, which may be empty). A daemon
  // that cannot be reached is not an error: the reader retries with backoff until destroyed.
  EventWatch(std::string base, std::string token, std::string target);
  // Stops the reader (breaking a read in progress) and joins it; never waits out a backoff.
  ~EventWatch();
  EventWatch(const EventWatch&) = delete;
  EventWatch& operator=(const EventWatch&) = delete;
  // Blocks until the first connection is established (the subscription is live); false on timeout.
  bool WaitConnected(std::chrono::milliseconds timeout);
  // The number of events seen so far (an overflow counts as one).
  uint64_t generation();
  // Blocks until generation() > seen or `timeout` passes; returns generation().
  uint64_t Wait(uint64_t seen, std::chrono::milliseconds timeout);
  // A copy of the last event's data (parsed JSON; null before any and after an overflow).
  nlohmann::json last();
  // How many times the stream was opened (1 when it never broke).
  int connections();

 private:
  void Run();                          // the reader thread's loop: connect, read, back off, reconnect
  void Feed(std::string_view chunk);   // on the reader thread: splits frames, bumps gen_ under mu_
  std::string base_, token_, target_;
  std::mutex mu_;  // guards everything below but thread_ and stream_client_
  std::condition_variable cv_;
  uint64_t gen_ = 0;
  int connections_ = 0;
  bool connected_ = false, stop_ = false, exited_ = false;
  int64_t last_id_ = 0;
  nlohmann::json last_;
  http::SseReader sse_;  // the stream's framing; reset at each connection
  std::unique_ptr<net::Client> stream_client_;  // the reader thread's; others only Interrupt() it
  std::thread thread_;
};

}  // namespace gauntlet::cli
