// Health, OpenAPI, Prometheus metrics, the event stream and the static dashboard.
#include <fstream>
#include <sstream>

#include "api/codec.h"
#include "api/handlers.h"
#include "api/sse.h"
#include "api/views.h"
#include "core/basis.h"
#include "core/verdict.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {
std::string ContentType(const std::string& path) {
  auto ends = [&](const char* ext) {
    std::string e(ext);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

// What a browser must hold the dashboard to: its own scripts, styles and API only (no inline
// script, nothing from elsewhere; web/ uses none), never framed by another site (clickjacking),
// and no content sniffing of a file into another type. The favicon is a data: URL.
Response Hardened(Response r) {
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                         "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                         "frame-ancestors 'none'");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  return r;
}

Response StaticFile(const std::string& dir, const std::string& rel) {
  if (rel.find("..") != std::string::npos || rel.find('\0') != std::string::npos)
    return http::Problem(404, "Not Found", "no such file");
  std::ifstream in(dir + "/" + rel, std::ios::binary);
  if (!in) return http::Problem(404, "Not Found", "no such file: " + rel);
  std::ostringstream ss;
  ss << in.rdbuf();
  Response r = http::Text(200, ContentType(rel), ss.str());
  r.headers.emplace_back("Cache-Control", "no-cache");
  return r;
}

void Metric(std::string& out, const std::string& name, const std::string& type, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}
}  // namespace

std::vector<http::Route> MetaRoutes(Context& c) {
  return {
      // Public: load balancers and Kubernetes probes cannot send a token; it says nothing about the data.
      {"GET", "/api/v1/health", Role::kPublic,
       [&c](Request&) -> Response {
         auto s = c.store.ListSuites();
         // Reads may work while writes cannot (a full disk): both are asked.
         std::optional<std::string> trouble = s.ok() ? c.store.WriteTrouble() : std::nullopt;
         const bool ok = s.ok() && !trouble;
         json j = {{"status", ok ? "ok" : "degraded"}, {"version", GAUNTLET_VERSION},
                   {"store", s.ok() ? trouble.value_or("ok") : s.status().message()},
                   {"uptime_s", (store::NowMs() - c.started_at) / 1000}};
         http::Response r = http::Json(ok ? 200 : 503, j);
         if (!ok) r.headers.emplace_back("Retry-After", std::to_string(kRetryAfterS));
         return r;
       }},
      {"GET", "/api/v1/openapi.json", Role::kRead,
       [](Request&) -> Response { return http::Text(200, "application/json", OpenApiDocument()); }},
      {"GET", "/api/v1/events", Role::kRead,
       [&c](Request& r) -> Response {
         int64_t last = 0, sweep = 0;
         if (auto h = r.Header("last-event-id"); !h.empty()) last = ParseId(h).value_or(0);
         if (auto q = r.Query("since")) last = ParseId(*q).value_or(0);
         if (auto q = r.Query("sweep")) sweep = ParseId(*q).value_or(0);
         Response out;
         out.content_type = "text/event-stream";
         out.stream = SseStream(c.events.Subscribe(last, sweep));
         return out;
       }},
      {"GET", "/metrics", Role::kRead,
       [&c](Request&) -> Response {
         std::string out;
         json st = StatsJson(c.coord.Stats());
         Metric(out, "gauntlet_queue_depth", "gauge", "Trials queued and not yet leased.");
         out += "gauntlet_queue_depth " + st["queued"].dump() + "\n";
         Metric(out, "gauntlet_leases_active", "gauge", "Trials leased or running.");
         out += "gauntlet_leases_active " + st["leased"].dump() + "\n";
         Metric(out, "gauntlet_workers_waiting", "gauge", "Workers in a lease long-poll.");
         out += "gauntlet_workers_waiting " + st["waiting_workers"].dump() + "\n";
         Metric(out, "gauntlet_nodes", "gauge", "Registered nodes by state.");
         for (NodeState ns : NodeStates()) {
           const std::string s(Name(ns));
           out += "gauntlet_nodes{state=\"" + s + "\"} " + std::to_string(st["nodes"].value(s, 0)) + "\n";
         }
         Metric(out, "gauntlet_lease_wait_seconds", "summary", "Time from a trial's queueing to its lease.");
         out += "gauntlet_lease_wait_seconds_sum " + st.value("lease_wait_sum_s", json(0.0)).dump() + "\n";
         out += "gauntlet_lease_wait_seconds_count " + st.value("lease_wait_count", json(0)).dump() + "\n";
         if (auto counts = c.store.CountTrials(); counts.ok()) {
           Metric(out, "gauntlet_trials", "gauge", "Trials by state and verdict.");
           for (auto& [state, verdict, n] : *counts)
             out += "gauntlet_trials{state=\"" + state + "\",verdict=\"" + verdict + "\"} " + std::to_string(n) + "\n";
         }
         return http::Text(200, "text/plain; version=0.0.4; charset=utf-8", out);
       }},
      {"GET", "/", Role::kPublic,
       [&c](Request&) -> Response { return Hardened(StaticFile(c.web_dir, "index.html")); }},
      {"GET", "/web/*", Role::kPublic,
       [&c](Request& r) -> Response {
         // The verdict vocabulary as an ES module: the dashboard's one source for verdicts, their
         // order, labels and colour families (core/verdict.h), so it never spells the list itself.
         if (r.params["*"] == "js/vocabulary.js") {
           static const std::string js = [] {
             // What a verdict can be judged from (core/basis.h), with how a person reads it.
             json bases = json::object();
             for (int i = 0; i < kBasisCount; ++i) bases[std::string(Name(static_cast<Basis>(i)))] = Label(static_cast<Basis>(i));
             return "// Generated by the daemon from core/verdict.cc and core/basis.cc.\nexport const VOCABULARY = " +
                    VocabularyJson().dump() + ";\nexport const BASES = " + bases.dump() + ";\n";
           }();
           return Hardened(http::Text(200, "text/javascript; charset=utf-8", js));
         }
         return Hardened(StaticFile(c.web_dir, r.params["*"]));
       }},
  };
}

}  // namespace gauntlet::api
