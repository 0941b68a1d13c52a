#include "api/handlers.h"

namespace gauntlet::api {

std::vector<http::Route> Routes(Context& c) {
  std::vector<http::Route> all;
  for (auto part : {SuiteRoutes(c), SweepRoutes(c), TrialRoutes(c), WorkerRoutes(c), ResultRoutes(c), CompareRoutes(c), AdviceRoutes(c), DeclaredRoutes(c), TriageRoutes(c),
                     WebhookRoutes(c), MetaRoutes(c)})
    for (auto& r : part) all.push_back(std::move(r));
  return all;
}

}  // namespace gauntlet::api
