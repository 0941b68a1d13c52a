#include "cli/cli_common.h"

#include "cli/suggest.h"

#include <algorithm>
#include <atomic>

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/csv.h"
#include "core/json_text.h"
#include "core/verdict.h"

namespace gauntlet::cli {
using nlohmann::json;

void AddConnOptions(CLI::App* c, net::Conn* conn) {
  c->add_option("--server", conn->server, "daemon URL (else GAUNTLET_SERVER, the config file, http://127.0.0.1:8080)");
  c->add_option("--token", conn->token, "API token (else GAUNTLET_TOKEN, the config file)");
  c->add_option("--ca-file", conn->ca_file,
                "PEM CA certificates to trust for an https:// server (else GAUNTLET_CA_FILE, the config file, the "
                "system's store)");
  c->add_option("--timeout", conn->timeout_s,
                "seconds one call to the daemon may take, connecting included (else GAUNTLET_TIMEOUT, 30)")
      ->check(CLI::Range(0.001, 86400.0));
}

void AddClientOptions(CLI::App* c, ClientOptions* o, const std::vector<std::string>& formats) {
  AddConnOptions(c, &o->conn);
  if (formats.empty()) return;
  c->add_option("--format", o->format, "output: " + JoinNames(formats))
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  // A table is fitted to the terminal (cells cut, never wrapped mid-cell); --wide keeps every cell whole.
  if (std::find(formats.begin(), formats.end(), "table") != formats.end())
    c->add_flag_callback("--wide", [] { SetWholeCells(true); }, "print every cell whole, wider than the terminal if need be");
}

std::unique_ptr<net::Client> Connect(ClientOptions& o) {
  net::Resolve(&o.conn);
  auto c = std::make_unique<net::Client>(o.conn.server, o.conn.token);
  c->SetTimeout(std::chrono::milliseconds(static_cast<int64_t>(o.conn.timeout_s * 1000)));
  c->SetExtraHeaders({{"X-Gauntlet-Client", "cli"}});  // a sweep submitted here says so (its `source`)
  return c;
}

namespace {
void PrintError(int status, const std::string& body, const std::string& what) {
  json p = json::parse(body, nullptr, false);
  std::string line = "gauntlet: " + std::to_string(status);
  if (p.is_object()) {
    line += " " + p.value("title", http::ReasonPhrase(status));
    if (p.contains("field") && p["field"].is_string() && !p["field"].get<std::string>().empty())
      line += ": " + p["field"].get<std::string>();
    line += ": " + p.value("detail", "");
  } else {
    std::string b = body.substr(0, 200);
    for (auto& ch : b)
      if (ch == '\n' || ch == '\r') ch = ' ';
    line += " " + http::ReasonPhrase(status) + ": " + what + (b.empty() ? "" : ": " + b);
  }
  if (status == 401) line += " (give a token with --token or GAUNTLET_TOKEN)";
  if (status == 403) line += " (this token's role may not do that)";
  std::cerr << line << "\n";
}

void Unreachable(net::Client& client, const Status& s) {
  std::cerr << "gauntlet: cannot reach " << client.base() << ": " << s.message()
            << " (is `gauntlet serve` running? set --server or GAUNTLET_SERVER)\n";
}
}  // namespace

namespace {
// The suite a 404 says does not exist ("no suite named 'x'", "no suite 'x'"), or "".
std::string UnknownSuite(const std::string& body) {
  const json p = json::parse(body, nullptr, false);
  const std::string detail = p.is_object() && p.contains("detail") && p["detail"].is_string() ? p["detail"].get<std::string>() : "";
  for (const char* lead : {"no suite named '", "no suite '"})
    if (detail.rfind(lead, 0) == 0) {
      const size_t from = std::char_traits<char>::length(lead), end = detail.find('\'', from);
      if (end != std::string::npos) return detail.substr(from, end - from);
    }
  return "";
}
}  // namespace

std::optional<net::ClientResponse> CallRaw(net::Client& client, const std::string& method, const std::string& target,
                                            const std::string& body, int* status, const std::string& content_type) {
  auto r = client.Send(method, target, body, content_type);
  if (status) *status = r.ok() ? r->status : 0;
  if (!r.ok()) {
    Unreachable(client, r.status());
    return std::nullopt;
  }
  if (r->status >= 400) {
    PrintError(r->status, r->body, method + " " + target);
    // A suite the daemon does not know, named by a command's --suite (the query's suite=): the
    // nearest one it does. Commands that name a suite otherwise say it in their own words.
    if (r->status == 404 && (target.find("?suite=") != std::string::npos || target.find("&suite=") != std::string::npos))
      if (const std::string name = UnknownSuite(r->body); !name.empty()) SuggestSuite(client, name);
    return std::nullopt;
  }
  return *r;
}

std::optional<json> Call(net::Client& client, const std::string& method, const std::string& target,
                         const std::string& body, int* status) {
  auto r = CallRaw(client, method, target, body, status);
  if (!r) return std::nullopt;
  if (r->body.empty()) return json();
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) {
    std::cerr << "gauntlet: " << client.base() << " answered " << method << " " << target
              << " with something that is not JSON (is that a gauntlet daemon?)\n";
    return std::nullopt;
  }
  return j;
}

std::string Str(const json& v) { return JsonText(v); }

std::string Duration(double s) {
  if (s < 0) s = 0;
  int64_t t = static_cast<int64_t>(s + 0.5);
  char buf[32];
  if (t >= 3600) snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(t / 3600), static_cast<long long>(t % 3600 / 60));
  else if (t >= 60) snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(t / 60), static_cast<long long>(t % 60));
  else snprintf(buf, sizeof buf, "%llds", static_cast<long long>(t));
  return buf;
}

const std::vector<std::string>& Verdicts() {
  static const std::vector<std::string> k = VerdictNames();
  return k;
}

bool IsTty() { return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr; }

std::string VerdictColor(const std::string& v) {
  if (!IsTty() || v.empty()) return "";
  // By family, as the dashboard colours them, so a new verdict needs no edit here. A name the
  // vocabulary does not know (a newer daemon) reads as bad: red draws the eye to it.
  const VerdictInfo* info = FindVerdict(v);
  const std::string_view family = info ? info->family : "bad";
  if (family == "ok") return "\033[32m";
  if (family == "none") return "\033[90m";
  if (family == "warn") return "\033[33m";
  if (family == "infra") return "\033[35m";
  return "\033[31m";
}

std::string Reset() { return IsTty() ? "\033[0m" : ""; }

namespace {
std::atomic<bool> g_whole_cells{false};
}  // namespace

void SetWholeCells(bool whole) { g_whole_cells = whole; }

size_t TerminalWidth() {
  if (g_whole_cells) return 0;
  if (const char* c = getenv("COLUMNS"); c && *c) {
    char* end = nullptr;
    long n = strtol(c, &end, 10);
    if (*end == '\0' && n > 0) return static_cast<size_t>(n);
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

namespace {
// Narrows columns [keep, n) of natural widths `w`, widest first, until a line with two-space gaps
// fits `max_width`; no column goes below a few characters (a cell must still say what it is).
// Returns false when the columns cannot fit even at their narrowest (the caller then wraps).
bool FitWidths(std::vector<size_t>& w, size_t max_width, size_t keep) {
  const size_t kMin = 8;
  auto total = [&] {
    size_t t = w.empty() ? 0 : 2 * (w.size() - 1);
    for (size_t x : w) t += x;
    return t;
  };
  while (total() > max_width) {
    size_t widest = w.size();
    for (size_t i = keep; i < w.size(); ++i)
      if (w[i] > kMin && (widest == w.size() || w[i] > w[widest])) widest = i;
    if (widest == w.size()) return false;  // as narrow as it gets: the terminal is too small
    --w[widest];
  }
  return true;
}

// A table too wide for the terminal at any column width, wrapped rather than cut: each row a block
// of "head: cell" lines, whole, blocks apart by a blank line (as psql's expanded display).
void PrintRecords(const std::vector<std::string>& head, const Rows& rows) {
  size_t label = 0;
  for (auto& h : head) label = std::max(label, DisplayWidth(h));
  bool first = true;
  for (auto& r : rows) {
    if (!first) std::cout << "\n";
    first = false;
    for (size_t i = 0; i < r.size() && i < head.size(); ++i)
      std::cout << head[i] << ":" << std::string(label - DisplayWidth(head[i]) + 1, ' ') << r[i] << "\n";
  }
}
}  // namespace

void PrintTable(const std::vector<std::string>& head, const Rows& rows, size_t max_width, size_t keep) {
  std::vector<size_t> w(head.size(), 0);
  for (size_t i = 0; i < head.size(); ++i) w[i] = DisplayWidth(head[i]);
  for (auto& r : rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], DisplayWidth(r[i]));
  if (max_width > 0 && !FitWidths(w, max_width, keep)) return PrintRecords(head, rows);
  auto print = [&](const std::vector<std::string>& r) {
    std::string line;
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) {
      const std::string cell = max_width > 0 ? CutToWidth(r[i], w[i]) : r[i];
      line += cell;
      if (i + 1 < r.size()) line += std::string(w[i] - DisplayWidth(cell) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << "\n";
  };
  print(head);
  for (auto& r : rows) print(r);
}

void PrintCsv(const std::vector<std::string>& head, const Rows& rows) {
  std::cout << CsvLine(head);
  for (auto& r : rows) std::cout << CsvLine(r);
}

std::string MarkdownCell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

void PrintMarkdown(const std::vector<std::string>& head, const Rows& rows) {
  auto row = [](const std::vector<std::string>& r) {
    std::string line = "|";
    for (auto& c : r) line += " " + MarkdownCell(c) + " |";
    std::cout << line << "\n";
  };
  row(head);
  std::string sep = "|";
  for (size_t i = 0; i < head.size(); ++i) sep += "---|";
  std::cout << sep << "\n";
  for (auto& r : rows) row(r);
}

void Print(const std::string& format, const std::vector<std::string>& head, const Rows& rows) {
  if (format == "csv") PrintCsv(head, rows);
  else if (format == "markdown") PrintMarkdown(head, rows);
  else PrintTable(head, rows, TerminalWidth());  // $COLUMNS or the terminal's; 0 (whole cells) in a pipe
}

// ---- EventWatch ----

EventWatch::EventWatch(std::string base, std::string token, std::string target)
    : base_(std::move(base)), token_(std::move(token)), target_(std::move(target)),
      stream_client_(std::make_unique<net::Client>(base_, token_)) {
  thread_ = std::thread([this] { Run(); });
}

EventWatch::~EventWatch() {
  std::unique_lock lk(mu_);
  stop_ = true;
  cv_.notify_all();
  // The reader may be blocked in a read (or just about to connect): break the socket until it has
  // noticed stop_. Each round waits on the exit condition, so this is not a sleep loop.
  while (!exited_) {
    lk.unlock();
    stream_client_->Interrupt();
    lk.lock();
    cv_.wait_for(lk, std::chrono::milliseconds(20), [&] { return exited_; });
  }
  lk.unlock();
  thread_.join();
}

void EventWatch::Feed(std::string_view chunk) {
  std::lock_guard lock(mu_);
  if (!connected_) {
    connected_ = true;
    cv_.notify_all();
  }
  sse_.Feed(chunk, [this](const http::SseEvent& ev) {
    // Comments (": keep-alive") and retry hints carry no data and never reach here.
    if (const int64_t id = std::atoll(std::string(ev.id).c_str()); id > 0) last_id_ = id;
    last_ = json::parse(ev.data, nullptr, false);
    if (ev.event == "overflow") {
      // The daemon cut this reader off; Run reconnects with ?since=. Count it as a change, since
      // events were dropped and the caller must re-read the state.
      last_ = json();
    }
    ++gen_;
    cv_.notify_all();
    return true;
  });
}

void EventWatch::Run() {
  int failures = 0;
  while (true) {
    std::string target;
    {
      std::lock_guard lock(mu_);
      if (stop_) break;
      ++connections_;
      sse_.Reset();
      target = target_;
      if (last_id_ > 0) target += (target.find('?') == std::string::npos ? "?" : "&") + ("since=" + std::to_string(last_id_));
    }
    // The daemon sends a keep-alive comment every 15 s; 45 s of silence means a dead connection.
    auto r = stream_client_->Stream(
        target,
        [this](std::string_view chunk) {
          Feed(chunk);
          std::lock_guard lock(mu_);
          return !stop_;
        },
        std::chrono::seconds(45));
    std::unique_lock lk(mu_);
    if (stop_) break;
    if (r.ok() && *r == 200) failures = 0;
    else ++failures;
    // Reconnect at once after a clean end (daemon restart, overflow); back off while it is down.
    // The wait is on stop_, so a destructor never waits out the backoff.
    auto backoff = std::chrono::milliseconds(std::min(2000, 100 * (1 << std::min(failures, 5))));
    if (failures > 0) cv_.wait_for(lk, backoff, [&] { return stop_; });
  }
  std::lock_guard lock(mu_);
  exited_ = true;
  cv_.notify_all();
}

bool EventWatch::WaitConnected(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return connected_; });
}

uint64_t EventWatch::generation() {
  std::lock_guard lock(mu_);
  return gen_;
}

uint64_t EventWatch::Wait(uint64_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  cv_.wait_for(lk, timeout, [&] { return gen_ > seen || stop_; });
  return gen_;
}

json EventWatch::last() {
  std::lock_guard lock(mu_);
  return last_;
}

int EventWatch::connections() {
  std::lock_guard lock(mu_);
  return connections_;
}

}  // namespace gauntlet::cli
