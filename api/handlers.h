// The REST API's handlers, grouped by resource; Routes() is the one route table (docs/DESIGN.md "REST API").
#pragma once
#include <string>
#include <vector>

#include "http/router.h"
#include "daemon/coordinator.h"
#include "daemon/events.h"
#include "store/store.h"

namespace gauntlet::api {

// What handlers reach. Owned by the serve command; outlives the server.
struct Context {
  store::Store& store;
  daemon::Coordinator& coord;
  daemon::EventBus& events;
  std::string web_dir;       // static dashboard files
  int64_t started_at = 0;
};

// Each returns its resource's routes; Routes() concatenates them in matching order. The handlers
// keep `c` by reference: it must outlive the routes (and the Router holding them).
std::vector<http::Route> SuiteRoutes(Context& c);
std::vector<http::Route> SweepRoutes(Context& c);
std::vector<http::Route> TrialRoutes(Context& c);
std::vector<http::Route> WorkerRoutes(Context& c);
std::vector<http::Route> ResultRoutes(Context& c);
std::vector<http::Route> MetaRoutes(Context& c);
std::vector<http::Route> CompareRoutes(Context& c);   // handlers_compare.cc
std::vector<http::Route> WebhookRoutes(Context& c);   // handlers_webhooks.cc
std::vector<http::Route> AdviceRoutes(Context& c);    // handlers_advice.cc: recommend, check
std::vector<http::Route> DeclaredRoutes(Context& c);  // handlers_declared.cc: declared support, drift
std::vector<http::Route> TriageRoutes(Context& c);    // handlers_triage.cc: unclassified failures, labels
std::vector<http::Route> Routes(Context& c);
// The router's recogniser of node credentials (the tokens registration hands workers): the node a
// bearer token speaks for, from the coordinator's memory. Keeps `c` by reference.
http::NodeCredentials NodeCredentialsOf(Context& c);

// The OpenAPI 3 document (api/openapi.json, compiled in; static storage).
const std::string& OpenApiDocument();

}  // namespace gauntlet::api
