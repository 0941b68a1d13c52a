#include "cli/sweep_progress.h"

#include <chrono>
#include <cmath>
#include <iostream>

namespace gauntlet::cli {
using nlohmann::json;

// docs/CLI.md promises exactly this: a skip is no failure, but a cancelled trial is (it was never judged).
bool SweepFailed(const json& by_verdict) {
  for (auto& [v, n] : by_verdict.items())
    if (v != "passed" && v != "skipped" && n.get<int64_t>() > 0) return true;
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
  return s["by_state"].value("running", int64_t{0}) + s["by_state"].value("leased", int64_t{0});
}

// Follows a sweep until it is finished. One event stream (GET /api/v1/events?sweep=ID) stays open
// for the whole wait; each event wakes the follower, which then reads the sweep's counts. The
// counts, not the events, are the truth: events only say "look now".
std::optional<json> FollowSweep(http::Client& client, const Conn& conn, int64_t id, bool bar) {
  EventWatch watch(conn.server, conn.token, "/api/v1/events?sweep=" + std::to_string(id));
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
      if (int64_t r = RunningTrials(*s)) line += "  running " + std::to_string(r);
      if (!finished) line += eta ? "  eta " + Duration(*eta) : std::string("  eta --");
      // Pad over the previous line rather than \033[K, so the bar also redraws on dumb terminals.
      size_t w = DisplayWidth(line);
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
                  << "sweep " << id << " finished in " << Duration(secs) << ": " << CountsLine(*s, ", ") << "\n";
        if (SweepFailed((*s)["by_verdict"]))
          std::cout << "see the failures: gauntlet trials --sweep " << id << " --verdict VERDICT; the grid: gauntlet matrix --suite "
                    << Str((*s)["suite"]) << " --sweep " << id << "\n";
      }
      return s;
    }
    watch.Wait(seen, fallback);
  }
}

}  // namespace gauntlet::cli
