#include "classifier/report_grammar.h"

#include <array>
#include <cctype>
#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

bool GrAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool GrDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool GrWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool GrHas(std::string_view s, std::string_view n) { return s.find(n) != std::string_view::npos; }

template <size_t N>
bool GrHasAny(std::string_view s, const std::array<std::string_view, N>& needles) {
  for (auto n : needles)
    if (GrHas(s, n)) return true;
  return false;
}

// NVIDIA's architecture family names (CUDA programming guide, "compute capabilities" table).
constexpr std::array<std::string_view, 9> kArchFamilies = {"hopper", "blackwell", "ampere", "lovelace", "volta",
                                                           "turing", "pascal",    "maxwell", "kepler"};

// Hardware nouns, which count only after a determiner that points at this machine
// ("not supported on this GPU", "for the current device", "your GPU"): alone they are too common.
constexpr std::array<std::string_view, 5> kHardwareNouns = {"gpu", "device", "platform", "hardware", "architecture"};
constexpr std::array<std::string_view, 7> kDeterminers = {"this ", "the current ", "current ", "your ",
                                                          "the ",  "target ",      "cuda "};

// The phrases arch checks use to refuse (FlashInfer, SGLang, vLLM, flash-attention, CUTLASS,
// Triton and PyTorch sources: "only supported on", "requires sm_100a", "minimum capability",
// "used without targeting appropriate compute capability").
// "to be true, but got false" is TORCH_CHECK's message when the check has none of its own
// (c10/util/Exception.h: "Expected " #cond " to be true, but got false."): with an arch in the
// condition ("Expected is_sm90 || is_sm8x to be true, but got false") it is an arch check that failed.
// "to be one of" is an argument check's constraint (CUTLASS's CuTe DSL: "expects arch to be one of
// ['sm_100a', 'sm_100f'], but got sm_121a"): with an arch in the line it is an arch check that failed.
constexpr std::array<std::string_view, 46> kArchRefusalPhrases = {
    "only supported on", "only supported for", "only supported with", "supported only on", "only supports",
    "only available on", "only runs on", "requires compute capability", "requires a gpu", "requires gpu",
    "requires sm", "requires an sm", "require sm", "requires cuda capability", "requires nvidia",
    "requires hopper", "requires blackwell", "requires ampere", "requires compute", "requires at least sm",
    "need sm", "needs sm", "not supported on", "not supported for", "not supported in this",
    "not supported by this", "not supported by the current", "unsupported arch", "unsupported gpu",
    "unsupported compute capability", "unsupported device", "unsupported sm", "does not support",
    "doesn't support", "not compatible with", "minimum capability", "compute capability of at least",
    "not implemented for sm", "no implementation for sm", "not available on", "must be run on",
    "without targeting", "to be true, but got false", "to be one of", "require hardware", "requires hardware"};

// A number at `pos` (after '=', ':', ' ', '(' separators), or nullopt.
std::optional<double> NumberAt(std::string_view s, size_t pos) {
  size_t i = pos;
  for (int k = 0; k < 3 && i < s.size() && (s[i] == '=' || s[i] == ':' || s[i] == ' ' || s[i] == '('); ++k) ++i;
  if (i >= s.size() || !(GrDigit(s[i]) || (s[i] == '.' && i + 1 < s.size() && GrDigit(s[i + 1])))) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data() + i) return std::nullopt;
  return v;
}

// The first value written after one of `words` (word start, optional "_suffix"), e.g. "rel_err=1.0"
// for {"err"}, "(tolerance 2e-2)" for {"tolerance"}.
template <size_t N>
std::optional<double> ValueAfter(std::string_view lower, const std::array<std::string_view, N>& words) {
  for (auto w : words) {
    for (size_t i = lower.find(w); i != std::string_view::npos; i = lower.find(w, i + 1)) {
      if (i > 0 && GrAlpha(lower[i - 1])) continue;
      size_t j = i + w.size();
      while (j < lower.size() && (GrAlpha(lower[j]) || lower[j] == '_')) ++j;
      if (std::optional<double> v = NumberAt(lower, j)) return v;
    }
  }
  return std::nullopt;
}

// "3670016/3670016" or "12 / 1024" somewhere in the line.
bool HasCountRatio(std::string_view lower) {
  for (size_t i = lower.find('/'); i != std::string_view::npos; i = lower.find('/', i + 1)) {
    size_t l = i;
    while (l > 0 && lower[l - 1] == ' ') --l;
    size_t r = i + 1;
    while (r < lower.size() && lower[r] == ' ') ++r;
    if (l > 0 && GrDigit(lower[l - 1]) && r < lower.size() && GrDigit(lower[r])) return true;
  }
  return false;
}

}  // namespace

bool MentionsSmArch(std::string_view lower) {
  for (size_t i = lower.find("sm"); i != std::string_view::npos; i = lower.find("sm", i + 1)) {
    if (i > 0 && GrAlpha(lower[i - 1])) continue;
    size_t j = i + 2;
    while (j < lower.size() && j < i + 5 &&
           (lower[j] == '_' || lower[j] == ' ' || lower[j] == '>' || lower[j] == '<' || lower[j] == '='))
      ++j;
    if (j < lower.size() && GrDigit(lower[j])) return true;
  }
  return false;
}

bool MentionsArch(std::string_view lower) {
  if (MentionsSmArch(lower) || GrHasAny(lower, kArchFamilies)) return true;
  if (GrHas(lower, "compute capability") || GrHas(lower, "cuda capability") || GrHas(lower, "minimum capability")) return true;
  // The architecture named by its kind rather than its number: "SM version not supported in this
  // NVRTC version" (TensorRT), "unsupported GPU architecture" (nvcc's "Unsupported gpu architecture").
  if (GrHas(lower, "sm version") || GrHas(lower, "sm architecture") || GrHas(lower, "gpu architecture") ||
      GrHas(lower, "gpu arch ") || GrHas(lower, "cuda arch"))
    return true;
  // A requirement on the hardware itself: TensorRT's "Networks with FP8 precision require hardware
  // with FP8 support."
  if (GrHas(lower, "require hardware") || GrHas(lower, "requires hardware")) return true;
  // nvcc's virtual architectures: "compute_90a".
  for (size_t i = lower.find("compute_"); i != std::string_view::npos; i = lower.find("compute_", i + 1))
    if (i + 8 < lower.size() && GrDigit(lower[i + 8])) return true;
  for (auto noun : kHardwareNouns) {
    for (size_t i = lower.find(noun); i != std::string_view::npos; i = lower.find(noun, i + 1)) {
      if (i > 0 && GrWordChar(lower[i - 1])) continue;
      size_t end = i + noun.size();  // "device(s)" but not "device-side" / "device_map"
      if (end < lower.size() && lower[end] == 's') ++end;
      if (end < lower.size() && (GrWordChar(lower[end]) || lower[end] == '-')) continue;
      for (auto det : kDeterminers)
        if (i >= det.size() && lower.substr(i - det.size(), det.size()) == det) return true;
    }
  }
  return false;
}

bool HasArchRefusalPhrase(std::string_view lower) { return GrHasAny(lower, kArchRefusalPhrases); }

std::vector<std::string> ArchGateNeedles() {
  std::vector<std::string> out(kArchRefusalPhrases.begin(), kArchRefusalPhrases.end());
  out.emplace_back("-only");
  return out;
}

bool ArchOnly(std::string_view lower) {
  for (size_t p = lower.find("-only"); p != std::string_view::npos; p = lower.find("-only", p + 1)) {
    size_t start = p;
    while (start > 0 && GrWordChar(lower[start - 1])) --start;
    std::string_view token = lower.substr(start, p - start);
    if (token.empty()) continue;
    if (MentionsSmArch(token)) return true;
    for (auto f : kArchFamilies)
      if (token == f) return true;
  }
  return false;
}

std::optional<std::string> PtxasTargetError(std::string_view raw, std::string_view lower) {
  const size_t tool = std::min(lower.find("ptxas"), lower.find("nvcc"));
  if (tool == std::string_view::npos) return std::nullopt;
  // ptxas's target grammar: the instruction or feature does not exist on the target it was asked for.
  static constexpr std::array<std::string_view, 5> kTargetErrors = {
      "not supported on .target", "requires .target", "cannot be compiled for architecture",
      "not supported on target", "is not defined for target"};
  if (!GrHasAny(lower, kTargetErrors)) return std::nullopt;
  // The detail is ptxas's own message: the text after its "error :" / "fatal :".
  size_t at = std::string_view::npos;
  for (std::string_view kind : {"error", "fatal"}) {
    size_t k = lower.find(kind, tool);
    if (k == std::string_view::npos) continue;
    size_t c = k + kind.size();
    while (c < lower.size() && lower[c] == ' ') ++c;
    if (c < lower.size() && lower[c] == ':') at = std::min(at, c + 1);
  }
  std::string_view detail = at == std::string_view::npos ? raw.substr(tool) : raw.substr(at);
  return NormalizeMessage(TrimSpace(detail), 80);
}

bool IsMismatchReport(std::string_view lower) {
  // torch.testing.assert_close, numpy.testing, and comparers that say so in words.
  static constexpr std::array<std::string_view, 10> kReports = {
      "tensor-likes are not close", "tensor-likes are not equal", "scalars are not close", "scalars are not equal",
      "not equal to tolerance",     "arrays are not equal",       "arrays are not almost equal",
      "mismatched elements:",       "results mismatch",           "accuracy check failed"};
  // numpy.testing's detail lines (numpy/testing/_private/utils.py: "Max absolute difference: 0.5")
  // and torch.testing's ("Greatest absolute difference: 0.5 at index (3,) (up to 1e-05 allowed)"):
  // printed only under a comparison that failed.
  if ((GrHas(lower, "max absolute difference") || GrHas(lower, "max relative difference") ||
       GrHas(lower, "greatest absolute difference") || GrHas(lower, "greatest relative difference")))
    return true;
  // Every report phrase has one of these words: three finds instead of ten on most lines.
  if ((GrHas(lower, "not ") || GrHas(lower, "mismatch") || GrHas(lower, "failed")) && GrHasAny(lower, kReports))
    return true;
  if ((GrHas(lower, "exceed") || GrHas(lower, "outside")) && (GrHas(lower, "tolerance") || GrHas(lower, "margin of error")))
    return true;
  // A count of differing elements: "MISMATCH 3670016/3670016 elements differ".
  if ((GrHas(lower, "mismatch") || GrHas(lower, "differ")) && HasCountRatio(lower)) return true;
  // An error measure printed next to its tolerance, and larger than it.
  static constexpr std::array<std::string_view, 4> kErrorWords = {"err", "diff", "delta", "error"};
  static constexpr std::array<std::string_view, 3> kTolWords = {"tolerance", "tol", "threshold"};
  std::optional<double> tol = ValueAfter(lower, kTolWords);
  if (!tol) return false;
  std::optional<double> err = ValueAfter(lower, kErrorWords);
  return err && *err > *tol;
}

bool SaysOutOfMemory(std::string_view lower) {
  static constexpr std::array<std::string_view, 4> kPhrases = {"not enough memory", "insufficient memory",
                                                               "not enough gpu memory", "not enough free memory"};
  return GrHasAny(lower, kPhrases);
}

}  // namespace gauntlet::classifier
