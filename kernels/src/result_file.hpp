// The stage result file (docs/DESIGN.md): written when GAUNTLET_RESULT_FILE is set.
// {"verdict": ..., "metrics": {"name": {"value": x, "unit": "..."}}, "detail": "..."}
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace gauntlet::kernels {

// Writes atomically (temp file + rename) so a reader never sees half a file. No-op when unset.
void write_result_file(const std::string& verdict, const nlohmann::json& metrics, const std::string& detail);
nlohmann::json metric(double value, const std::string& unit);

}  // namespace gauntlet::kernels
