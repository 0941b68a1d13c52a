// The JSON, markdown and shell forms of a recommendation (core/recommend.h) and a pre-flight check
// (core/preflight.h): what GET /api/v1/recommend and /check answer. Pure; thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/preflight.h"
#include "core/recommend.h"
#include "core/suite.h"

namespace gauntlet::api {

// {"suite", "version", "by", "metric", "confident_low", "items": [{"hardware", "region", "decision",
// "configs", "candidates", "lower_is_better", "best": config|null, "runner_up": config|null,
// "margin": relative metric gap|null}]}; a config is {"config_key", "config", "flags", "env",
// "shell", "runs", "passed", "reused", "pass_rate", "verdicts", "metric", "evidence", "trial",
// "fingerprint"}.
nlohmann::json RecommendJson(const Suite& suite, const std::vector<std::string>& by, const std::string& metric,
                             const std::vector<Recommendation>& recs);
// One table row per hardware × region, for an issue; names the suite version and each fingerprint.
std::string RecommendMarkdown(const nlohmann::json& j);
// One commented shell line per hardware × region that has a best config.
std::string RecommendShell(const nlohmann::json& j);

// {"suite", "version", "hardware", "config_key", "config", "known", "exit_code", "flags", "shell",
// "runs", "passed", "reused", "pass_rate", "verdicts", "latest": {"verdict", "signature", "trial",
// "fingerprint"}|null, "evidence", "nearest": [config + "changed"]}.
nlohmann::json CheckJson(const Suite& suite, const std::string& hardware, const Config& config, const Preflight& p);
std::string CheckMarkdown(const nlohmann::json& j);

}  // namespace gauntlet::api
