// `gauntlet flaky --suite S`: the suite's flaky cells with their pass rates and 95% Wilson intervals
// (GET /api/v1/flaky), least reliable first.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

void AddFlakyCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto suite = std::make_shared<std::string>();
  auto c = app.add_subcommand("flaky", "Configs that both passed and failed on one hardware class, with pass rates");
  c->add_option("--suite", *suite, "suite name")->required();
  AddClientOptions(c, o.get(), {"table", "csv", "json"});
  c->callback([=] {
    auto client = Connect(*o);
    if (o->format == "csv") {  // the API's CSV as it is: one set of columns for scripts, wherever they read it
      auto csv = CallRaw(*client, "GET", "/api/v1/flaky?format=csv&suite=" + http::UrlEncode(*suite));
      if (!csv) return void(*code = 2);
      return void(std::cout << csv->body);
    }
    auto r = Call(*client, "GET", "/api/v1/flaky?suite=" + http::UrlEncode(*suite));
    if (!r) return void(*code = 2);
    if (o->format == "json") return void(std::cout << r->dump(2) << "\n");
    Rows rows;
    for (auto& i : (*r)["items"]) {
      const json& p = i["pass_rate"];
      char rate[64] = "";
      if (p.is_object())
        snprintf(rate, sizeof rate, "%lld/%lld = %.0f%% (95%%: %.0f-%.0f%%)", static_cast<long long>(p["passed"].get<int64_t>()),
                 static_cast<long long>(p["runs"].get<int64_t>()), 100 * p["rate"].get<double>(),
                 100 * p["low"].get<double>(), 100 * p["high"].get<double>());
      rows.push_back({i["config_key"].get<std::string>(), i["hardware"].get<std::string>(), rate,
                      i["verdict"].get<std::string>()});
    }
    const std::vector<std::string> head = {"config", "hardware", "pass rate", "latest"};
    if (rows.empty()) std::cout << "no flaky configs in " << *suite << "\n";
    else PrintTable(head, rows, TerminalWidth());
  });
}

}  // namespace gauntlet::cli
