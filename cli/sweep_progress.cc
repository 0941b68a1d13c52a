#include "cli/sweep_progress.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <set>

#include "core/verdict.h"

namespace gauntlet::cli {
using nlohmann::json;

// docs/CLI.md promises exactly this: a skip is no failure, but a cancelled trial is (it was never judged).
bool SweepFailed(const json& by_verdict) {
  for (auto& [v, n] : by_verdict.items()) {
    const std::optional<Verdict> pv = ParseVerdict(v);
    if (pv != Verdict::kPassed && pv != Verdict::kSkipped && n.get<int64_t>() > 0) return true;
  }
  return false;
}

std::string CountsLine(const json& s, const char* sep) {
  std::string out;
  for (auto& v : Verdicts()) {
    int64_t n = s["by_verdict"].value(v, int64_t{0});
    if (n > 0) out += (out.empty() ? "" : sep) + VerdictColor(v) + v + " " + std::to_string(n) + Reset();
  }
  return out;
}

int64_t RunningTrials(const json& s) {
  const json& by = s["by_state"];
  return by.value(std::string(Name(TrialState::kRunning)), int64_t{0}) + by.value(std::string(Name(TrialState::kLeased)), int64_t{0});
}

std::string ReusedText(const json& s) {
  const int64_t n = s.is_object() && s.contains("reused") && s["reused"].is_number() ? s["reused"].get<int64_t>() : 0;
  return n > 0 ? "reused " + std::to_string(n) : "";
}

std::vector<std::string> HeldOutLines(const json& s) {
  std::vector<std::string> out;
  if (!s.is_object() || !s.contains("held_out_nodes") || !s["held_out_nodes"].is_array()) return out;
  for (auto& n : s["held_out_nodes"]) {
    const std::string reason = Str(n.value("reason", json()));
    out.push_back("node " + Str(n.value("name", json())) + " (" + Str(n.value("node", json())) + ") is " +
                  Str(n.value("state", json())) + (reason.empty() ? "" : ": " + reason) +
                  "; an admin resumes it: " + Str(n.value("resume", json())));
  }
  return out;
}

std::vector<std::string> UnmatchedLines(const json& s) {
  std::vector<std::string> out;
  if (!s.is_object() || !s.contains("unmatched_targets")) return out;
  for (auto& u : s["unmatched_targets"]) {
    std::string line = "target " + Str(u.value("index", json())) + " " + u.value("target", json::object()).dump() + ": ";
    if (u.contains("requires")) line += Str(u["requires"]) + "; nodes: " + Str(u.value("nodes", json()));
    else line += Str(u.value("detail", json()));  // an older daemon says it in one text
    out.push_back(line);
  }
  return out;
}

namespace {

// Prints a followed sweep's progress: a bar redrawn in place, or one JSON line per change.
class Progress {
 public:
  Progress(int64_t id, bool bar) : id_(id), bar_(bar) {}

  void Show(const json& s, double secs, std::optional<double> eta) {
    const int64_t total = s["trials"].get<int64_t>(), done = s["done"].get<int64_t>();
    const bool finished = s["finished"].get<bool>();
    if (!bar_) {
      json j = {{"sweep", id_}, {"done", done}, {"trials", total}, {"finished", finished},
                {"by_verdict", s["by_verdict"]}, {"by_state", s["by_state"]}, {"reused", s.value("reused", 0)}};
      std::string line = j.dump();  // eta varies every read; it is not a change by itself
      if (line != last_line_) {
        j["elapsed_s"] = std::round(secs * 10) / 10;
        j["eta_s"] = eta ? json(std::round(*eta)) : json();
        std::cout << j.dump() << "\n" << std::flush;
      }
      last_line_ = line;
      return;
    }
    const int width = 24;
    int fill = total ? static_cast<int>(width * done / total) : width;
    std::string line = "sweep " + std::to_string(id_) + " [" + std::string(fill, '#') + std::string(width - fill, '-') +
                       "] " + std::to_string(done) + "/" + std::to_string(total);
    std::string counts = CountsLine(s, " · ");
    if (!counts.empty()) line += "  " + counts;
    if (std::string r = ReusedText(s); !r.empty()) line += "  (" + r + ")";
    if (int64_t r = RunningTrials(s)) line += "  running " + std::to_string(r);
    if (!finished) line += eta ? "  eta " + Duration(*eta) : std::string("  eta --");
    // Pad over the previous line rather than \033[K, so the bar also redraws on dumb terminals.
    size_t w = DisplayWidth(line);
    std::cout << "\r" << line << std::string(last_width_ > w ? last_width_ - w : 0, ' ') << std::flush;
    last_width_ = w;
  }

  // After the last Show of a finished sweep: a summary and where to look next (bar only; the JSON
  // lines' last one says it all).
  void Finish(const json& s, double secs) {
    if (!bar_) return;
    std::string r = ReusedText(s);
    std::cout << "\n"
              << "sweep " << id_ << " finished in " << Duration(secs) << ": " << CountsLine(s, ", ")
              << (r.empty() ? "" : " (" + r + " from earlier trials)") << "\n";
    if (SweepFailed(s["by_verdict"]))
      std::cout << "see the failures: gauntlet trials --sweep " << id_
                << " --verdict VERDICT; the grid: gauntlet matrix --sweep " << id_ << "\n";
  }

  // Ends a bar's line, so an error does not print over it.
  void Break() {
    if (bar_ && last_width_ > 0) std::cout << "\n" << std::flush;
    last_width_ = 0;
  }

 private:
  int64_t id_;
  bool bar_;
  std::string last_line_;
  size_t last_width_ = 0;
};

void SayUnrunnable(int64_t id, const std::vector<std::string>& lines) {
  for (auto& l : lines) std::cerr << "gauntlet: sweep " << id << " cannot finish: no registered node can run " << l << "\n";
  std::cerr << "gauntlet: its trials stay queued: start such a node, cancel them (gauntlet cancel " << id
            << "), or wait for one with --wait-for-nodes\n";
}

}  // namespace

// Follows a sweep until it is finished. One event stream (GET /api/v1/events?sweep=ID) stays open
// for the whole wait; each event wakes the follower, which then reads the sweep's counts. The
// counts, not the events, are the truth: events only say "look now".
std::optional<json> FollowSweep(net::Client& client, const net::Conn& conn, int64_t id, FollowOptions opts) {
  EventWatch watch(conn.server, conn.token, "/api/v1/events?sweep=" + std::to_string(id));
  // Subscribe before the first read, so no change between the read and the subscription is lost.
  // Without a stream (a proxy that buffers SSE) the follower still works, by the fallback period.
  watch.WaitConnected(std::chrono::seconds(5));
  // Lease expiries and reused results are published without a sweep id, so they never reach this
  // filtered stream; re-read at least this often so such a change still shows up.
  const auto fallback = std::chrono::seconds(5);
  const auto patience = std::chrono::seconds(60);
  // A worker started just before the sweep may not have registered yet: an unrunnable target ends
  // the wait only once it has stayed so this long.
  const auto unrunnable_grace = std::chrono::seconds(2);
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<int64_t> done0;
  std::optional<std::chrono::steady_clock::time_point> unrunnable_since;
  auto last_ok = t0;
  Progress progress(id, opts.bar);
  std::set<std::string> said_held_out;
  const std::string target = "/api/v1/sweeps/" + std::to_string(id);
  while (true) {
    const uint64_t seen = watch.generation();
    int status = 0;
    std::optional<json> s;
    // A daemon restart (or a network blip) must not end a CI job's wait: retry until `patience`.
    auto r = client.Send("GET", target);
    if (r.ok() && r->status == 200) s = json::parse(r->body, nullptr, false);
    else if (r.ok()) status = r->status;
    if (s && s->is_discarded()) s.reset();
    if (!s && (status >= 400 && status < 500)) return Call(client, "GET", target);
    auto now = std::chrono::steady_clock::now();
    if (!s) {
      if (now - last_ok > patience) return Call(client, "GET", target);
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
    progress.Show(*s, secs, eta);
    if (finished) {
      progress.Finish(*s, secs);
      return s;
    }
    // Nodes out of service that the sweep waits for: said once each, and the wait goes on (an admin
    // may resume them).
    for (const std::string& l : HeldOutLines(*s))
      if (said_held_out.insert(l).second) {
        progress.Break();
        std::cerr << "gauntlet: sweep " << id << " waits: " << l << "\n";
      }
    const auto unrunnable = opts.wait_for_nodes ? std::vector<std::string>{} : UnmatchedLines(*s);
    if (unrunnable.empty()) unrunnable_since.reset();
    else if (!unrunnable_since) unrunnable_since = now;
    if (unrunnable_since && now - *unrunnable_since >= unrunnable_grace) {
      progress.Break();
      SayUnrunnable(id, unrunnable);
      return std::nullopt;
    }
    watch.Wait(seen, unrunnable_since ? std::chrono::milliseconds(500) : std::chrono::milliseconds(fallback));
  }
}

}  // namespace gauntlet::cli
