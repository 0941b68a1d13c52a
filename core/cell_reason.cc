#include "core/cell_reason.h"

#include <algorithm>
#include <cctype>

#include "core/basis.h"
#include "core/text_width.h"
#include "core/user_regex.h"
#include "core/verdict.h"

namespace gauntlet {

namespace {

std::vector<std::string> SplitParts(std::string_view s) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(':', i);
    if (j == std::string_view::npos) j = s.size();
    parts.emplace_back(s.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

// "no_kernel_image" -> "no kernel image": only words of lowercase letters are identifiers to read
// as words; "sm_120a", "fp8_e4m3" and "trtllm_moe_sm100_only" name things and stay as written.
std::string Words(const std::string& part) {
  if (part.find('_') == std::string::npos) return part;
  for (char c : part)
    if (!(c == '_' || (c >= 'a' && c <= 'z'))) return part;
  std::string out = part;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

bool IsNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) || c == '-'; });
}

// Timeout keys the worker and classifier give (docs/CLASSIFIER.md), which are not stage names.
bool WorkerTimeoutKey(const std::string& s) {
  return s == "nccl_watchdog" || s == "server_not_ready" || s == "rank_hang" || s == "stage_limit";
}

// The signature's reason parts: the verdict prefix, an innermost frame ("@file.py") and an exception's
// type (when a message follows) left out, empty parts dropped.
std::vector<std::string> ReasonParts(std::string_view verdict, std::string_view signature) {
  std::string_view s = signature;
  if (s.size() > verdict.size() && s.substr(0, verdict.size()) == verdict && s[verdict.size()] == ':')
    s.remove_prefix(verdict.size() + 1);
  else if (s == verdict) s = {};
  if (auto at = s.find('@'); at != std::string_view::npos) s = s.substr(0, at);
  std::vector<std::string> parts = SplitParts(s);
  static const UserRegex kExceptionType = UserRegex::Fixed("^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Warning)$");
  // The exception's type says less than its message; keep the type only when there is no message.
  if (parts.size() > 1 && kExceptionType.FullMatch(parts[0])) parts.erase(parts.begin());
  parts.erase(std::remove(parts.begin(), parts.end(), std::string()), parts.end());
  return parts;
}

// The reason parts as a phrase: keyed facts joined to their value ("exit code 1"), others by ": ".
std::string Phrase(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const bool keyed = i + 1 < parts.size() && ((p == "exit_code" && IsNumber(parts[i + 1])) || p == "signal");
    std::string piece = keyed ? Words(p) + " " + parts[i + 1] : Words(p);
    if (keyed) ++i;
    out += (out.empty() ? "" : ": ") + piece;
  }
  return out;
}

std::string Cut(const std::string& s) { return DisplayWidth(s) > kReasonColumns ? CutToWidth(s, kReasonColumns) : s; }

}  // namespace

std::string ReasonText(std::string_view verdict, std::string_view signature, const std::vector<std::string>* stages) {
  if (verdict.empty()) return "";
  const VerdictInfo* info = FindVerdict(verdict);
  const std::string label = info ? std::string(info->label) : std::string(verdict);
  std::vector<std::string> parts = ReasonParts(verdict, signature);
  if (parts.empty()) return label;
  // A failure no tool explained says so, not as if it were a recognised crash (core/basis.h).
  if (info && info->severity > 0 && UnclassifiedSignature(signature)) return Cut("unclassified: " + Phrase(parts));
  // A skip's signature is "skipped:" + the settling result's: say that result the same way.
  if (info && info->verdict == Verdict::kSkipped && IsVerdict(parts[0])) {
    std::string rest = std::string(signature.substr(std::min(signature.size(), verdict.size() + 1)));
    return Cut(label + ": " + ReasonText(parts[0], rest, stages));
  }
  // A signature that names only the stage (a timeout's, a result file's verdict): where it happened.
  if (parts.size() == 1) {
    const bool stage = stages ? std::find(stages->begin(), stages->end(), parts[0]) != stages->end()
                              : info && info->verdict == Verdict::kTimeout && !WorkerTimeoutKey(parts[0]);
    if (stage) return Cut(label + " in stage " + parts[0]);
  }
  return Cut(label + ": " + Phrase(parts));
}

}  // namespace gauntlet
