// Webhook delivery records: GET /api/v1/webhooks/deliveries. Admin only: a receiver's URL is often
// its secret (a Slack incoming webhook's is).
#include <set>

#include "api/codec.h"
#include "api/handlers.h"
#include "store/deliveries.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

std::vector<http::Route> WebhookRoutes(Context& c) {
  return {
      {"GET", "/api/v1/webhooks/deliveries", Role::kAdmin,
       [&c](Request& r) -> Response {
         for (auto& [k, v] : r.query)
           if (k != "state" && k != "limit" && k != "after")
             return http::Problem(400, "Bad Request", "unknown query parameter (allowed: state, limit, after)", k);
         const std::string state = r.Query("state").value_or("");
         if (!state.empty() && state != "pending" && state != "delivered" && state != "failed")
           return FromStatus(Status::Invalid("one of pending, delivered, failed", "state"));
         int64_t after = 0;
         if (auto a = r.Query("after")) {
           auto n = ParseId(*a);
           if (!n) return http::Problem(400, "Bad Request", "a cursor from `next`", "after");
           after = *n;
         }
         int limit = 100;
         if (auto l = r.Query("limit"))
           if (auto n = ParseId(*l)) limit = static_cast<int>(std::clamp<int64_t>(*n, 1, 1000));
         auto rows = store::ListDeliveries(c.store, after, limit + 1, state);
         if (!rows.ok()) return FromStatus(rows.status());
         json items = json::array();
         for (size_t i = 0; i < rows->size() && static_cast<int>(i) < limit; ++i) {
           const store::DeliveryRow& d = (*rows)[i];
           json body = json::parse(d.body, nullptr, false);
           items.push_back({{"id", d.id}, {"hook", d.hook}, {"event", d.event}, {"state", d.state},
                            {"attempts", d.attempts}, {"created_at", d.created_at},
                            {"next_at", d.state == "pending" ? json(d.next_at) : json()},
                            {"last_at", d.last_at ? json(*d.last_at) : json()},
                            {"last_status", d.last_status ? json(*d.last_status) : json()},
                            {"last_error", d.last_error},
                            {"delivered_at", d.delivered_at ? json(*d.delivered_at) : json()},
                            {"body", body.is_discarded() ? json(d.body) : body}});
         }
         json next = static_cast<int>(rows->size()) > limit ? json((*rows)[limit - 1].id) : json();
         return http::Json({{"items", items}, {"next", next}});
       }},
  };
}

}  // namespace gauntlet::api
