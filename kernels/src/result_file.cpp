// Stage result file writer (see result_file.hpp).
#include "result_file.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace gauntlet::kernels {

nlohmann::json metric(double value, const std::string& unit) {
  return {{"value", std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr)}, {"unit", unit}};
}

void write_result_file(const std::string& verdict, const nlohmann::json& metrics, const std::string& detail) {
  const char* path = std::getenv("GAUNTLET_RESULT_FILE");
  if (!path || !*path) return;
  const nlohmann::json j = {{"verdict", verdict}, {"metrics", metrics}, {"detail", detail}};
  const std::string tmp = std::string(path) + ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump() << "\n";
    if (!f) {
      std::fprintf(stderr, "gauntlet-kernels: cannot write %s\n", tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path) != 0) std::fprintf(stderr, "gauntlet-kernels: cannot rename to %s\n", path);
}

}  // namespace gauntlet::kernels
