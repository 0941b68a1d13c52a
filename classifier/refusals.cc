#include "classifier/refusals.h"

#include <array>
#include <cctype>
#include <initializer_list>
#include <utility>
#include <vector>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

using Words = std::initializer_list<std::string_view>;

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool HasAny(std::string_view lower, Words needles) {
  for (auto n : needles)
    if (lower.find(n) != std::string_view::npos) return true;
  return false;
}

// `word` where it starts a word: "fp8" in "fp8e4nv" and "kv_cache_dtype", not "half" in "behalf".
bool HasWordStart(std::string_view lower, std::string_view word) {
  for (size_t i = lower.find(word); i != std::string_view::npos; i = lower.find(word, i + 1))
    if (i == 0 || !IsAlnum(lower[i - 1])) return true;
  return false;
}

bool HasAnyWordStart(std::string_view lower, Words words) {
  for (auto w : words)
    if (HasWordStart(lower, w)) return true;
  return false;
}

// --- which exceptions can be refusals ------------------------------------------------------------

// Refusals by their very type, whatever the message: the library has no code path for the request.
bool IsRefusalType(std::string_view type) {
  return type == "NotImplementedError" || type == "Unsupported" || type == "InvalidBackend";
}

// Types a library raises to refuse a request when its message says so. TypeError, AssertionError,
// KeyError, ... are left out on purpose: they are the program's own bugs and invariants
// ("unsupported operand type(s)" is a TypeError), and an assert's words are read only by the arch gate.
bool MayRefuseInWords(std::string_view type) {
  return type == "ValueError" || type.ends_with("RuntimeError") || type == "ImportError" ||
         type == "ModuleNotFoundError";
}

// "must be" followed by a constraint on the value, not "must be on CUDA" / "must be contiguous".
bool HasMustBeConstraint(std::string_view lower) {
  static constexpr std::array<std::string_view, 20> kConstraints = {
      "one of", "a multiple of", "multiple of", "divisible", "a power of", "power of", "at most", "at least",
      "less than", "greater than", "smaller than", "larger than", "no more than", "no larger than", "between",
      "either", "in [", "in (", "in {", "in the range"};
  for (size_t i = lower.find("must be "); i != std::string_view::npos; i = lower.find("must be ", i + 1)) {
    std::string_view rest = lower.substr(i + 8);
    if (!rest.empty() && (std::isdigit(static_cast<unsigned char>(rest[0])) || rest[0] == '<' || rest[0] == '>'))
      return true;
    for (auto c : kConstraints)
      if (rest.starts_with(c)) return true;
  }
  return false;
}

// The words a library uses to refuse a request (plus "must be" + constraint, above).
constexpr std::array<std::string_view, 17> kRefusalPhrases = {
    "not supported",      "unsupported",         "not implemented",      "unimplemented",     "only support",
    "only available",     "only works",          "only implemented",     "only accepts",      "does not support",
    "doesn't support",    "do not support",      "does not yet support", "no support for",    "not yet supported",
    "failed to dispatch", "no available kernel"};

// The words a library uses to say a package is missing ("No module named" is handled apart).
// transformers 5 words a missing flash_attn as "the package for FlashAttention2 doesn't seem to be
// installed" (seen on the H200, transformers 5.17, 2026-12-01).
constexpr std::array<std::string_view, 7> kInstallPhrases = {"not installed", "please install", "pip install",
                                                             "not found in your environment", "cannot find a working",
                                                             "n't seem to be installed", "not seem to be installed"};

template <size_t N>
bool HasAnyOf(std::string_view lower, const std::array<std::string_view, N>& phrases) {
  for (auto p : phrases)
    if (lower.find(p) != std::string_view::npos) return true;
  return false;
}

// "No dot product attention backend is available for the provided inputs" (TransformerEngine), "no
// kernel found for ...", "No valid algorithm": the library looked for a code path and has none.
// "no" (at a word start), then within a few words a code-path noun, then a word saying it is absent.
bool SaysNoCodePath(std::string_view lower) {
  static constexpr std::array<std::string_view, 7> kPaths = {"backend", "kernel", "implementation", "support",
                                                             "engine",  "algorithm", "code path"};
  static constexpr std::array<std::string_view, 5> kAbsent = {"available", "found", "for the provided", "for this",
                                                              "for the given"};
  for (size_t i = lower.find("no "); i != std::string_view::npos; i = lower.find("no ", i + 1)) {
    if (i > 0 && IsAlnum(lower[i - 1])) continue;
    std::string_view rest = lower.substr(i + 3, 80);
    for (auto p : kPaths) {
      const size_t at = rest.find(p);
      if (at == std::string_view::npos) continue;
      std::string_view after = rest.substr(at + p.size());
      for (auto a : kAbsent)
        if (after.find(a) != std::string_view::npos) return true;
    }
  }
  return false;
}

bool SaysRefusal(std::string_view lower) {
  return HasAnyOf(lower, kRefusalPhrases) || HasMustBeConstraint(lower) || SaysNoCodePath(lower);
}

// --- the family: what the refusal is about --------------------------------------------------------

// Checked in this order; the first family with a word in the message names the key.
std::string_view Family(std::string_view lower) {
  if (HasAnyWordStart(lower, {"head_dim", "head dim", "headdim", "head size", "head_size", "headsize",
                              "head dimension", "hdim"}))
    return "head_dim";
  if (HasAnyWordStart(lower, {"dtype", "data type", "datatype", "scalar type", "scalartype", "precision", "float16",
                              "bfloat16", "float32", "float64", "float8", "float4", "fp16", "bf16", "fp32", "fp64",
                              "fp8", "fp6", "fp4", "tf32", "int8", "int4", "uint8", "e4m3", "e5m2", "nvfp4",
                              "mxfp4", "mxfp6", "mxfp8", "half", "double"}))
    return "dtype";
  if (HasAnyWordStart(lower, {"shape", "seq_len", "seqlen", "seq len", "sequence length", "num_heads", "num heads",
                              "number of heads", "heads", "num_kv_heads", "block size", "block_size", "page size",
                              "page_size", "batch size", "batch_size", "group size", "group_size", "alignment",
                              "aligned", "divisible", "multiple of", "power of 2", "dimension", "dim", "stride",
                              "layout", "tile"}))
    return "shape";
  return "option";
}

// --- missing packages --------------------------------------------------------------------------

// Packages a config selects as a backend and a node may lack: a missing one of these is the
// node's limitation. Any other missing module is the program's (or the image's) fault.
constexpr std::array<std::string_view, 39> kOptionalBackends = {
    "flash_attn", "flash_attn_interface", "flash_mla", "flashinfer", "xformers", "triton", "tvm", "deep_gemm",
    "deep_ep", "sgl_kernel", "vllm_flash_attn", "apex", "bitsandbytes", "auto_gptq", "gptqmodel", "awq",
    "optimum", "transformer_engine", "tensorrt", "tensorrt_llm", "torch_tensorrt", "onnxruntime", "openvino",
    "intel_extension_for_pytorch", "torch_xla", "jax_triton", "mamba_ssm", "causal_conv1d", "liger_kernel",
    "cutlass", "quack", "sageattention", "aiter", "torchao", "hidet", "natten", "mscclpp", "nixl", "lmcache"};

bool IsOptionalBackend(std::string_view name) {
  for (auto b : kOptionalBackends)
    if (name == b) return true;
  return false;
}

// pip / marketing names -> the import name.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kAliases = {{
    {"flash_attention", "flash_attn"},
    {"flash_attention_2", "flash_attn"},
    {"flashattention", "flash_attn"},
    {"flashattention2", "flash_attn"},
    {"flashinfer_python", "flashinfer"},
    {"deepgemm", "deep_gemm"},
    {"deepep", "deep_ep"},
    {"nvidia_cutlass_dsl", "cutlass"},
    {"nvidia_cutlass", "cutlass"},
    {"apache_tvm", "tvm"},
    {"autoawq", "awq"},
    {"pytorch_triton", "triton"},
}};

// Words that stand where a package name is expected but are none ("the package is not installed").
bool IsStopWord(std::string_view w) {
  for (std::string_view s : {"is", "are", "was", "be", "been", "it", "them", "the", "a", "an", "this", "that", "or",
                             "and", "with", "via", "from", "to", "for", "package", "library", "module", "seems", "but",
                             "doesn't", "does"})
    if (w == s) return true;
  return w.empty();
}

bool IsNameChar(char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; }

// The name-like token starting at `pos` (quotes and backticks skipped): "flash-attn>=2.5" -> "flash-attn".
std::string_view TokenAt(std::string_view text, size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\'' || text[pos] == '"' || text[pos] == '`'))
    ++pos;
  size_t end = pos;
  while (end < text.size() && IsNameChar(text[end])) ++end;
  while (end > pos && text[end - 1] == '.') --end;  // a sentence's full stop
  return text.substr(pos, end - pos);
}

// The name-like token that ends just before `pos`, skipping "is", "seems to be", quotes.
std::string_view TokenBefore(std::string_view text, size_t pos) {
  for (int words = 0; words < 5 && pos > 0; ++words) {
    while (pos > 0 && (text[pos - 1] == ' ' || text[pos - 1] == '\'' || text[pos - 1] == '"' || text[pos - 1] == '`'))
      --pos;
    size_t start = pos;
    while (start > 0 && IsNameChar(text[start - 1])) --start;
    std::string_view w = text.substr(start, pos - start);
    std::string lower = ToLowerAscii(w);
    if (!IsStopWord(lower)) return w;
    pos = start;
  }
  return {};
}

// Where a message names the missing package, in the order tried.
std::string NamedPackage(std::string_view msg, std::string_view lower) {
  auto after = [&](std::string_view marker) -> std::string {
    size_t at = lower.find(marker);
    return at == std::string_view::npos ? "" : NormalizePackage(TokenAt(msg, at + marker.size()));
  };
  for (std::string_view marker : {"the package ", "cannot find a working ", "requires the "}) {
    std::string name = after(marker);
    if (!IsStopWord(name)) return name;
  }
  for (std::string_view marker :
       {"not installed", "not found in your environment", "doesn't seem to be installed", "does not seem to be installed"}) {
    size_t at = lower.find(marker);
    if (at == std::string_view::npos) continue;
    std::string name = NormalizePackage(TokenBefore(msg, at));
    if (!IsStopWord(name) && name != "not") return name;
  }
  for (std::string_view marker : {"pip install ", "please install "}) {
    std::string name = after(marker);
    if (!name.empty() && name[0] != '_' && !IsStopWord(name)) return name;
  }
  return "unknown";
}

}  // namespace

std::string NormalizePackage(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '=' || c == '<' || c == '>' || c == '!' || c == '~' || c == '[' || c == ' ' || c == '.') break;
    if (c == '\'' || c == '"' || c == '`') continue;
    out.push_back(c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (const auto& [alias, import_name] : kAliases)
    if (out == alias) return std::string(import_name);
  return out;
}

std::optional<std::string> MissingPackage(const ExceptionLine& e) {
  if (!MayRefuseInWords(e.type) && !IsRefusalType(e.type)) return std::nullopt;
  const std::string lower = ToLowerAscii(e.message);
  // An installed package that fails to load is a broken install, not a missing one.
  if (HasAny(lower, {"cannot import name", "undefined symbol", "cannot open shared object", "dll load failed"}))
    return std::nullopt;
  if (size_t at = lower.find("no module named"); at != std::string::npos) {
    std::string name = NormalizePackage(TokenAt(e.message, at + 15));
    if (IsOptionalBackend(name)) return name;
  }
  if (!HasAnyOf(lower, kInstallPhrases)) return std::nullopt;
  return NamedPackage(e.message, lower);
}

std::vector<std::string> RefusalNeedles() {
  // "error:" / "exception:": every exception line is a candidate, so a refusal is judged by its
  // type and message wherever it appears, not only when one of the phrases below is in it.
  std::vector<std::string> out = {"notimplementederror", "unsupported", "invalidbackend", "must be ",
                                  "no module named",     "error:",      "exception:"};
  for (auto p : kRefusalPhrases) out.emplace_back(p);
  for (auto p : kInstallPhrases) out.emplace_back(p);
  return out;
}

std::optional<std::string> RefusalKey(const ExceptionLine& e) {
  if (std::optional<std::string> pkg = MissingPackage(e)) return "unsupported:not_installed:" + *pkg;
  const std::string lower = ToLowerAscii(e.message);
  const bool refusal = IsRefusalType(e.type) || (MayRefuseInWords(e.type) && SaysRefusal(lower));
  if (!refusal) return std::nullopt;
  return "unsupported:" + std::string(Family(lower));
}

}  // namespace gauntlet::classifier
