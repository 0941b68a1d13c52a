#include "core/stage_limits.h"

namespace gauntlet {
using nlohmann::json;

namespace {
Status Range(const json& v, int64_t lo, int64_t hi, const std::string& field, const char* what) {
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    return Status::Invalid(std::string(what) + " is an integer from " + std::to_string(lo) + " to " + std::to_string(hi),
                           field);
  return Status::Ok();
}

int64_t LimitField(const json& j, const char* key) {
  if (!j.is_object() || !j.contains("limits") || !j["limits"].is_object()) return 0;
  const json& l = j["limits"];
  return l.contains(key) && l[key].is_number_integer() ? l[key].get<int64_t>() : 0;
}
}  // namespace

Status ValidateStageLimits(const json& limits, const std::string& field) {
  if (!limits.is_object()) return Status::Invalid("limits is an object {\"memory_mb\": N, \"pids\": N}", field);
  for (auto& [k, v] : limits.items()) {
    if (k == "memory_mb") {
      if (Status s = Range(v, kMinStageMemoryMb, kMaxStageMemoryMb, field + ".memory_mb", "memory_mb"); !s.ok()) return s;
    } else if (k == "pids") {
      if (Status s = Range(v, kMinStagePids, kMaxStagePids, field + ".pids", "pids"); !s.ok()) return s;
    } else {
      return Status::Invalid("unknown field (allowed: memory_mb, pids)", field + "." + k);
    }
  }
  return Status::Ok();
}

StageLimits LimitsOf(const json& suite, const json& stage) {
  StageLimits l;
  l.memory_mb = LimitField(stage, "memory_mb");
  if (l.memory_mb == 0) l.memory_mb = LimitField(suite, "memory_mb");
  l.pids = LimitField(stage, "pids");
  if (l.pids == 0) l.pids = LimitField(suite, "pids");
  return l;
}

}  // namespace gauntlet
