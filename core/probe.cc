#include "core/probe.h"

#include <nlohmann/json.hpp>

#include "core/utf8.h"

namespace gauntlet {
using nlohmann::json;

namespace {
// `s` cut to at most `n` bytes, never inside a UTF-8 character.
std::string CutAt(std::string_view s, size_t n) {
  if (s.size() <= n) return std::string(s);
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}
}  // namespace

Result<ProbeAnswer> ParseProbeAnswer(std::string_view line) {
  if (line.empty()) return Status::Invalid("the probe printed nothing; it must print {\"supported\": true|false, \"reason\": \"...\"} last");
  if (!ValidUtf8(line)) return Status::Invalid("the probe's last line is not valid UTF-8");
  const std::string shown = CutAt(line, 200);
  const json j = json::parse(line, nullptr, false);
  if (!j.is_object())
    return Status::Invalid("the probe's last line is not a JSON object {\"supported\": true|false, \"reason\": \"...\"}: " +
                           shown);
  if (!j.contains("supported") || !j["supported"].is_boolean())
    return Status::Invalid("the probe's answer has no boolean \"supported\": " + shown);
  if (j.contains("reason") && !j["reason"].is_null() && !j["reason"].is_string())
    return Status::Invalid("the probe's \"reason\" is not a string: " + shown);
  ProbeAnswer a;
  a.supported = j["supported"].get<bool>();
  if (j.contains("reason") && j["reason"].is_string()) a.reason = j["reason"].get<std::string>();
  a.reason = CutAt(a.reason, kMaxProbeReason);
  return a;
}

}  // namespace gauntlet
