// Software versions as one JSON object: the `version` subcommand, used as a suite fingerprint.
#pragma once
#include <nlohmann/json.hpp>

namespace gauntlet::kernels {
nlohmann::json versions();
}
