// The status vocabularies (classifier/status_vocabulary.h): each table agrees, name by name and
// number by number, with the header installed here (read by a parser of this test's own, so the
// generator's parser is not checked against itself); every value has a reason; FindStatus finds a
// value by its name, its message and its number only where the rules allow, and fast.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "classifier/status/vocabularies.h"
#include "classifier/status_vocabulary.h"

namespace gauntlet::classifier {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<StatusHit> Find(std::string_view line) {
  std::string lower = Lowered(line);
  return FindStatus(line, lower);
}

const StatusVocabulary& Vocabulary(std::string_view id) {
  for (const StatusVocabulary* v : StatusVocabularies())
    if (v->id == id) return *v;
  ADD_FAILURE() << "no vocabulary " << id;
  return *StatusVocabularies().front();
}

// --- a small C header reader: enums and #defines ----------------------------------------------------

// Comments become a space; preprocessor lines are dropped unless `keep_directives`.
std::string WithoutComments(std::string_view text, bool keep_directives) {
  std::string out;
  bool line_start = true, directive = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 2) == "/*") {
      size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
      continue;
    }
    if (text.substr(i, 2) == "//") {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    char c = text[i];
    if (line_start && c == '#') directive = true;
    if (c != ' ' && c != '\t') line_start = false;
    if (c == '\n') line_start = true, directive = false;
    if (!directive || keep_directives || c == '\n') out += c;
  }
  return out;
}

struct Token {
  enum Kind { kIdent, kNumber, kPunct } kind;
  std::string text;
};

std::vector<Token> Tokens(std::string_view s) {
  std::vector<Token> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      ++i;
    } else if (std::isalpha(c) || c == '_') {
      size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      out.push_back({Token::kIdent, std::string(s.substr(b, i - b))});
    } else if (std::isdigit(c)) {
      size_t b = i;
      while (i < s.size() && std::isalnum(static_cast<unsigned char>(s[i]))) ++i;
      out.push_back({Token::kNumber, std::string(s.substr(b, i - b))});
    } else if (s.substr(i, 2) == "<<") {
      out.push_back({Token::kPunct, "<<"});
      i += 2;
    } else {
      out.push_back({Token::kPunct, std::string(1, s[i++])});
    }
  }
  return out;
}

// Evaluates tokens[*at..] as an integer constant expression: literals (decimal, hex, with U/L
// suffixes), names already known, unary minus, + - << | and parentheses.
class Evaluator {
 public:
  Evaluator(const std::vector<Token>& t, const std::map<std::string, int64_t>& known) : t_(t), known_(known) {}
  std::optional<int64_t> Run() {
    int64_t v = Or();
    if (!ok_ || at_ != t_.size()) return std::nullopt;
    return v;
  }

 private:
  bool Is(std::string_view p) const { return at_ < t_.size() && t_[at_].kind == Token::kPunct && t_[at_].text == p; }
  int64_t Or() {
    int64_t v = Shift();
    while (Is("|")) ++at_, v |= Shift();
    return v;
  }
  int64_t Shift() {
    int64_t v = Add();
    while (Is("<<")) ++at_, v <<= Add();
    return v;
  }
  int64_t Add() {
    int64_t v = Unary();
    while (Is("+") || Is("-")) {
      bool plus = Is("+");
      ++at_;
      int64_t r = Unary();
      v = plus ? v + r : v - r;
    }
    return v;
  }
  int64_t Unary() {
    if (Is("-")) return ++at_, -Unary();
    if (Is("(")) {
      ++at_;
      int64_t v = Or();
      if (!Is(")")) ok_ = false;
      ++at_;
      return v;
    }
    if (at_ >= t_.size()) return ok_ = false, 0;
    const Token& tok = t_[at_++];
    if (tok.kind == Token::kNumber) {
      std::string digits = tok.text;
      while (!digits.empty() && std::strchr("uUlL", digits.back())) digits.pop_back();
      return std::stoll(digits, nullptr, 0);
    }
    auto it = known_.find(tok.text);
    if (tok.kind != Token::kIdent || it == known_.end()) return ok_ = false, 0;
    return it->second;
  }
  const std::vector<Token>& t_;
  const std::map<std::string, int64_t>& known_;
  size_t at_ = 0;
  bool ok_ = true;
};

// The enumerators of `type`: "typedef enum [tag] { ... } type;" or "enum [attrs] type { ... }".
// An empty map when the enum is not in the text.
std::map<std::string, int64_t> HeaderEnum(const std::string& header_text, std::string_view type) {
  std::vector<Token> all = Tokens(WithoutComments(header_text, false));
  size_t open = all.size(), close = all.size();
  for (size_t i = 0; i + 2 < all.size() && open == all.size(); ++i) {
    if (all[i].text == "}" && all[i + 1].text == type && all[i + 2].text == ";") {
      close = i;
      int depth = 0;
      for (size_t j = i + 1; j-- > 0;) {
        if (all[j].text == "}") ++depth;
        if (all[j].text == "{" && --depth == 0) {
          open = j;
          break;
        }
      }
    }
    if (all[i].text == "enum") {
      size_t j = i + 1;
      while (j < all.size() && all[j].kind == Token::kIdent && all[j].text != type) ++j;
      size_t brace = j + 1;  // past an underlying type: "enum class StatusCode : int {"
      if (brace < all.size() && all[brace].text == ":")
        while (brace < all.size() && all[brace].text != "{" && all[brace].text != ";") ++brace;
      if (brace < all.size() && all[j].text == type && all[brace].text == "{") {
        open = brace;
        for (close = open; close < all.size() && all[close].text != "}";) ++close;
      }
    }
  }
  std::map<std::string, int64_t> out;
  if (open >= close) return out;
  int64_t next = 0;
  std::vector<Token> item;
  auto finish = [&] {
    if (item.empty() || item[0].kind != Token::kIdent) return item.clear();
    size_t eq = 1;
    while (eq < item.size() && item[eq].text != "=") ++eq;  // skips attribute macros
    int64_t value = next;
    if (eq < item.size()) {
      std::vector<Token> expr(item.begin() + static_cast<long>(eq) + 1, item.end());
      std::optional<int64_t> v = Evaluator(expr, out).Run();
      EXPECT_TRUE(v.has_value()) << "cannot evaluate " << item[0].text;
      value = v.value_or(0);
    }
    out[item[0].text] = value;
    next = value + 1;
    item.clear();
  };
  int depth = 0;
  for (size_t i = open + 1; i < close; ++i) {
    if (all[i].text == "(") ++depth;
    if (all[i].text == ")") --depth;
    if (all[i].text == "," && depth == 0) {
      finish();
    } else {
      item.push_back(all[i]);
    }
  }
  finish();
  return out;
}

// "#define NAME VALUE" for names starting with `prefix` and then [A-Z0-9]; VALUE a number or a
// name defined before (in these files, in order). Other #defines are skipped.
std::map<std::string, int64_t> HeaderDefines(const std::vector<fs::path>& files, std::string_view prefix) {
  std::map<std::string, int64_t> out;
  for (const fs::path& f : files) {
    std::istringstream lines(WithoutComments(Slurp(f), true));
    for (std::string line; std::getline(lines, line);) {
      std::vector<Token> t = Tokens(line);
      if (t.size() != 4 || t[0].text != "#" || t[1].text != "define") continue;
      const std::string& name = t[2].text;
      if (!name.starts_with(prefix) || name.size() == prefix.size()) continue;
      if (!std::all_of(name.begin() + static_cast<long>(prefix.size()), name.end(),
                       [](char c) { return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(c); }))
        continue;
      if (out.count(name)) continue;  // an #ifndef fallback of a name already defined
      std::vector<Token> expr{t[3]};
      if (std::optional<int64_t> v = Evaluator(expr, out).Run()) out[name] = *v;
    }
  }
  return out;
}

fs::path CudaInclude() {
  const char* home = std::getenv("CUDA_HOME");
  if (home && *home && fs::exists(fs::path(home) / "include")) return fs::path(home) / "include";
  return "/usr/local/cuda/include";
}

// The multiarch include folder holding glibc's bits/ headers, or "" if none.
fs::path MultiarchInclude() {
  for (const char* d : {"/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu"})
    if (fs::exists(fs::path(d) / "bits")) return d;
  return {};
}

void ExpectSameValues(const StatusVocabulary& voc, const std::map<std::string, int64_t>& header,
                      const std::string& where) {
  std::map<std::string, int64_t> table;
  for (const StatusValue& v : voc.values) table[std::string(v.name)] = v.code;
  for (const auto& [name, code] : header) {
    auto it = table.find(name);
    if (it == table.end()) {
      ADD_FAILURE() << voc.id << ": " << name << " = " << code << " (" << where << ") has no table entry";
    } else {
      EXPECT_EQ(it->second, code) << voc.id << ": " << name << " (" << where << ")";
    }
  }
  for (const auto& [name, code] : table)
    EXPECT_TRUE(header.count(name)) << voc.id << ": table entry " << name << " = " << code << " is not in " << where;
}

// --- tables against headers ---------------------------------------------------------------------------

struct EnumSource {
  const char* vocabulary;
  const char* header;  // under the CUDA include folder
  const char* type;
};

class HeaderAgreement : public testing::TestWithParam<EnumSource> {};

TEST_P(HeaderAgreement, EveryEnumeratorHasItsEntryAndNoOther) {
  const EnumSource& s = GetParam();
  fs::path header = CudaInclude() / s.header;
  if (!fs::exists(header)) GTEST_SKIP() << header << " is not installed here: " << s.vocabulary << " not checked";
  std::map<std::string, int64_t> values = HeaderEnum(Slurp(header), s.type);
  ASSERT_FALSE(values.empty()) << "no enum " << s.type << " in " << header;
  ExpectSameValues(Vocabulary(s.vocabulary), values, header.string());
}

INSTANTIATE_TEST_SUITE_P(
    Cuda, HeaderAgreement,
    testing::Values(EnumSource{"cuda_runtime", "driver_types.h", "cudaError"},
                    EnumSource{"cuda_driver", "cuda.h", "CUresult"},
                    EnumSource{"cublas", "cublas_api.h", "cublasStatus_t"},
                    EnumSource{"cudnn", "cudnn_graph.h", "cudnnStatus_t"},
                    EnumSource{"cufft", "cufft.h", "cufftResult"},
                    EnumSource{"cusparse", "cusparse.h", "cusparseStatus_t"},
                    EnumSource{"cusolver", "cusolver_common.h", "cusolverStatus_t"},
                    EnumSource{"curand", "curand.h", "curandStatus"},
                    EnumSource{"nvrtc", "nvrtc.h", "nvrtcResult"},
                    EnumSource{"nccl", "nccl.h", "ncclResult_t"}),
    [](const testing::TestParamInfo<EnumSource>& info) { return std::string(info.param.vocabulary); });

TEST(StatusHeaders, ParserReadsTheShapesTheHeadersUse) {
  const std::string text = R"(
    /* CUDNN_STATUS_X = 9 in a comment */
    typedef enum { A_OK = 0, A_HEX = 0x1B, // trailing = 4
      A_NEXT, A_NEG = -2, A_ALIAS DEPRECATED_ATTR = A_HEX, A_EXPR = (A_HEX + 1) } a_t;
    enum __device_builtin__ b { B0 = 0
      , B1 = 10000 };
    #define E_ONE 1
    enum class StatusCode : int {
      // StatusCode::kOk
      kOk = 0,
      kCancelled = 1,
      kDoNotUseReservedForFutureExpansionUseDefaultInSwitchInstead_ = 20
    };
  )";
  EXPECT_EQ(HeaderEnum(text, "a_t"), (std::map<std::string, int64_t>{
                                         {"A_OK", 0}, {"A_HEX", 27}, {"A_NEXT", 28}, {"A_NEG", -2},
                                         {"A_ALIAS", 27}, {"A_EXPR", 28}}));
  EXPECT_EQ(HeaderEnum(text, "b"), (std::map<std::string, int64_t>{{"B0", 0}, {"B1", 10000}}));
  EXPECT_EQ(HeaderEnum(text, "StatusCode"),
            (std::map<std::string, int64_t>{
                {"kOk", 0}, {"kCancelled", 1}, {"kDoNotUseReservedForFutureExpansionUseDefaultInSwitchInstead_", 20}}));
  EXPECT_TRUE(HeaderEnum(text, "missing_t").empty());
}

TEST(StatusHeaders, ErrnoAgreesWithTheKernelAndGlibcHeaders) {
  const fs::path base = "/usr/include/asm-generic/errno-base.h", more = "/usr/include/asm-generic/errno.h";
  const fs::path multiarch = MultiarchInclude();
  if (!fs::exists(base) || !fs::exists(more) || multiarch.empty())
    GTEST_SKIP() << "the Linux errno headers are not installed here: errno not checked";
  // glibc's bits/errno.h adds ENOTSUP (= EOPNOTSUPP) on top of the kernel's.
  std::map<std::string, int64_t> values = HeaderDefines({base, more, multiarch / "bits/errno.h"}, "E");
  ASSERT_GT(values.size(), 100u);
  ExpectSameValues(Vocabulary("errno"), values, "asm-generic/errno*.h, bits/errno.h");
}

TEST(StatusHeaders, SignalsAgreeWithGlibcHeaders) {
  const fs::path multiarch = MultiarchInclude();
  const fs::path generic = multiarch / "bits/signum-generic.h", arch = multiarch / "bits/signum-arch.h";
  if (multiarch.empty() || !fs::exists(generic) || !fs::exists(arch))
    GTEST_SKIP() << "glibc's bits/signum headers are not installed here: signals not checked";
  std::map<std::string, int64_t> values;
  for (const auto& [name, n] : HeaderDefines({generic, arch}, "SIG"))
    if (n >= 1 && n <= 31) values[name] = n;
  ASSERT_EQ(values.size(), 34u);  // 31 signals and SIGIOT, SIGIO, SIGCLD
  ExpectSameValues(Vocabulary("signals"), values, "bits/signum-generic.h, bits/signum-arch.h");
}

TEST(StatusHeaders, AbslAgreesWithAbseilsHeader) {
  fs::path header;
  for (const char* p : {"/usr/include/absl/status/status.h", "/usr/local/include/absl/status/status.h"})
    if (fs::exists(p)) header = p;
  if (header.empty()) GTEST_SKIP() << "abseil's absl/status/status.h is not installed here: absl not checked";
  std::map<std::string, int64_t> values;
  for (const auto& [k, n] : HeaderEnum(Slurp(header), "StatusCode")) {
    if (k.starts_with("kDoNotUse")) continue;  // a reserved sentinel, not a code
    std::string name;  // kInvalidArgument -> INVALID_ARGUMENT
    for (size_t i = 1; i < k.size(); ++i) {
      if (i > 1 && std::isupper(static_cast<unsigned char>(k[i]))) name += '_';
      name += static_cast<char>(std::toupper(static_cast<unsigned char>(k[i])));
    }
    values[name] = n;
  }
  ExpectSameValues(Vocabulary("absl"), values, header.string());
}

TEST(StatusHeaders, PythonHasEveryBuiltinException) {
  FILE* p = popen(
      "python3 -c 'import builtins; print(*[n for n, v in vars(builtins).items() "
      "if isinstance(v, type) and issubclass(v, BaseException)])' 2>/dev/null",
      "r");
  std::set<std::string> names;
  if (p) {
    char buf[256];
    while (std::fscanf(p, "%255s", buf) == 1) names.insert(buf);
    pclose(p);
  }
  if (names.empty()) GTEST_SKIP() << "python3 is not runnable here: the Python exceptions not checked";
  std::set<std::string> table;
  for (const StatusValue& v : Vocabulary("python").values) table.insert(std::string(v.name));
  for (const std::string& n : names) EXPECT_TRUE(table.count(n)) << "builtins." << n << " has no table entry";
  for (const std::string& n : table) EXPECT_TRUE(names.count(n)) << n << " is not in this Python's builtins";
}

// --- the tables themselves ----------------------------------------------------------------------------

TEST(StatusTables, EveryValueHasAReasonAndAUniqueName) {
  std::set<std::string_view> ids;
  for (const StatusVocabulary* v : StatusVocabularies()) {
    EXPECT_TRUE(ids.insert(v->id).second) << v->id;
    EXPECT_FALSE(v->title.empty()) << v->id;
    EXPECT_FALSE(v->source.empty()) << v->id;
    EXPECT_FALSE(v->values.empty()) << v->id;
    for (std::string_view w : v->context) EXPECT_EQ(w, Lowered(w)) << v->id << " context word " << w;
    std::set<std::string_view> names;
    for (const StatusValue& s : v->values) {
      EXPECT_TRUE(names.insert(s.name).second) << v->id << ": " << s.name << " twice";
      EXPECT_FALSE(s.reason.empty()) << v->id << ": " << s.name << " has no reason";
      EXPECT_FALSE(s.name.empty()) << v->id;
      if (!s.key.empty()) {
        EXPECT_TRUE(s.key.starts_with(std::string(Name(s.verdict)) + ":"))
            << v->id << ": " << s.name << "'s key " << s.key << " does not start with its verdict";
      }
      EXPECT_NE(s.verdict, Verdict::kFallback) << s.name;
      EXPECT_NE(s.verdict, Verdict::kCancelled) << s.name;
      EXPECT_NE(s.verdict, Verdict::kSkipped) << s.name;
    }
  }
}

TEST(StatusTables, SignaturesKeepTheClassifiersKeys) {
  auto signature = [](std::string_view line) { return Find(line) ? Find(line)->Signature() : std::string("none"); };
  EXPECT_EQ(signature("cudaErrorNoKernelImageForDevice"), "unsupported:no_kernel_image");
  EXPECT_EQ(signature("CUDA_ERROR_NO_BINARY_FOR_GPU"), "unsupported:no_binary_for_gpu");
  EXPECT_EQ(signature("cudaErrorIllegalAddress"), "crashed:illegal_memory_access");
  EXPECT_EQ(signature("CUDA_ERROR_ILLEGAL_ADDRESS"), "crashed:illegal_memory_access");
  EXPECT_EQ(signature("cudaErrorMemoryAllocation"), "oom:cuda");
  EXPECT_EQ(signature("cudaErrorLaunchOutOfResources"), "unsupported:launch_out_of_resources");
  EXPECT_EQ(signature("cudaErrorUnsupportedPtxVersion"), "unsupported:ptx_toolchain");
  EXPECT_EQ(signature("CUBLAS_STATUS_NOT_SUPPORTED"), "unsupported:cublas_not_supported");
  EXPECT_EQ(signature("CUBLAS_STATUS_EXECUTION_FAILED"), "crashed:cublas_execution_failed");
  EXPECT_EQ(signature("CUDNN_STATUS_NOT_SUPPORTED_SHAPE"), "unsupported:cudnn_not_supported");
  EXPECT_EQ(signature("CUDNN_STATUS_ARCH_MISMATCH"), "unsupported:cudnn_arch_mismatch");
  EXPECT_EQ(signature("Segmentation fault (core dumped)"), "crashed:signal:SIGSEGV");
  EXPECT_EQ(signature("SIGIOT"), "crashed:signal:SIGABRT");
  EXPECT_EQ(signature("MemoryError"), "oom:host");
  EXPECT_EQ(signature("ENOMEM"), "oom:host");
  EXPECT_EQ(signature("ENOSPC"), "infra_error:disk_full");
  EXPECT_EQ(signature("EADDRINUSE"), "infra_error:port_in_use");
  // No key: "<verdict>:<vocabulary>:<name>".
  EXPECT_EQ(signature("cudaErrorSystemNotReady"), "infra_error:cuda_runtime:cudaErrorSystemNotReady");
  EXPECT_EQ(signature("ncclRemoteError"), "infra_error:nccl:ncclRemoteError");
  EXPECT_EQ(signature("SIGALRM"), "timeout:signals:SIGALRM");
  EXPECT_EQ(StatusHit{}.Signature(), "");
}

// --- FindStatus -----------------------------------------------------------------------------------------

struct Want {
  const char* line;
  const char* vocabulary;
  const char* name;
  StatusHow how;
  Verdict verdict;
};

// The prefilter's needles must let through every line FindStatus finds something in.
bool HasNeedle(std::string_view line) {
  std::string lower = Lowered(line);
  for (const std::string& n : StatusNeedles())
    if (lower.find(n) != std::string::npos) return true;
  return false;
}

void ExpectHit(const Want& w) {
  std::optional<StatusHit> hit = Find(w.line);
  ASSERT_TRUE(hit.has_value()) << w.line;
  EXPECT_EQ(hit->vocabulary->id, w.vocabulary) << w.line;
  EXPECT_EQ(hit->value->name, w.name) << w.line;
  EXPECT_EQ(hit->how, w.how) << w.line;
  EXPECT_EQ(hit->value->verdict, w.verdict) << w.line;
  EXPECT_TRUE(HasNeedle(w.line)) << "no needle in " << w.line;
}

constexpr StatusHow kName = StatusHow::kName, kMessage = StatusHow::kMessage, kNumber = StatusHow::kNumber;
using enum Verdict;

TEST(FindStatus, CudaRuntimeAndDriver) {
  for (const Want& w : std::initializer_list<Want>{
           {"RuntimeError: CUDA error: system not yet initialized", "cuda_runtime", "cudaErrorSystemNotReady",
            kMessage, kInfraError},
           {"CUDA error 802", "cuda_runtime", "cudaErrorSystemNotReady", kNumber, kInfraError},
           {"check failed: cudaErrorSystemNotReady", "cuda_runtime", "cudaErrorSystemNotReady", kName, kInfraError},
           {"[802] Call to cuInit results in CUDA_ERROR_SYSTEM_NOT_READY", "cuda_driver",
            "CUDA_ERROR_SYSTEM_NOT_READY", kName, kInfraError},
           {"cuinit returned cuda_error_system_not_ready", "cuda_driver", "CUDA_ERROR_SYSTEM_NOT_READY", kName,
            kInfraError},
           {"UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet "
            "initialized (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)",
            "cuda_runtime", "cudaErrorSystemNotReady", kMessage, kInfraError},
           {"RuntimeError: CUDA error: no kernel image is available for execution on the device", "cuda_runtime",
            "cudaErrorNoKernelImageForDevice", kMessage, kUnsupported},
           {"no kernel image is available for execution on the device", "cuda_runtime",
            "cudaErrorNoKernelImageForDevice", kMessage, kUnsupported},
           {"RuntimeError: CUDA error: an illegal memory access was encountered", "cuda_runtime",
            "cudaErrorIllegalAddress", kMessage, kCrashed},
           {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda_runtime",
            "cudaErrorMemoryAllocation", kMessage, kOom},
           {"RuntimeError: CUDA error: invalid argument", "cuda_runtime", "cudaErrorInvalidValue", kMessage, kCrashed},
           {"CUDA: device not ready", "cuda_runtime", "cudaErrorNotReady", kMessage, kPassed},
           {"cudaGetDeviceCount returned 100", "cuda_runtime", "cudaErrorNoDevice", kNumber, kInfraError},
           {"CUDA failure: error code=700", "cuda_runtime", "cudaErrorIllegalAddress", kNumber, kCrashed},
           {"cuMemAlloc failed: CUresult 2", "cuda_driver", "CUDA_ERROR_OUT_OF_MEMORY", kNumber, kOom},
           {"CUDA kernel launch failed (error 209)", "cuda_runtime", "cudaErrorNoKernelImageForDevice", kNumber,
            kUnsupported},
           {"cudaMalloc failed (2)", "cuda_runtime", "cudaErrorMemoryAllocation", kNumber, kOom},
           {"RuntimeError: CUDA error 2", "cuda_runtime", "cudaErrorMemoryAllocation", kNumber, kOom},
           {"CUDA_ERROR_NO_BINARY_FOR_GPU", "cuda_driver", "CUDA_ERROR_NO_BINARY_FOR_GPU", kName, kUnsupported},
           {"INTERNAL: Failed to launch CUDA kernel: CUDA_ERROR_ILLEGAL_ADDRESS", "cuda_driver",
            "CUDA_ERROR_ILLEGAL_ADDRESS", kName, kCrashed},
           {"error: CUDAERRORASSERT", "cuda_runtime", "cudaErrorAssert", kName, kCrashed},
           {"Exception: CUDA error: device-side assert triggered", "cuda_runtime", "cudaErrorAssert", kMessage,
            kCrashed},
           {"CUDA driver API error 3", "cuda_driver", "CUDA_ERROR_NOT_INITIALIZED", kNumber, kCrashed},
       })
    ExpectHit(w);
}

TEST(FindStatus, Libraries) {
  for (const Want& w : std::initializer_list<Want>{
           {"RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa)`",
            "cublas", "CUBLAS_STATUS_EXECUTION_FAILED", kName, kCrashed},
           {"cuBLAS error: the requested functionality is not supported", "cublas", "CUBLAS_STATUS_NOT_SUPPORTED",
            kMessage, kUnsupported},
           {"RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "cudnn",
            "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", kName, kUnsupported},
           {"cudnn_status_internal_error_device_allocation_failed", "cudnn",
            "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", kName, kOom},
           {"RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "cufft", "CUFFT_INTERNAL_ERROR", kName, kCrashed},
           {"cusparse error: out of memory", "cusparse", "CUSPARSE_STATUS_ALLOC_FAILED", kMessage, kOom},
           // The more specific library's context word wins a tie with "cuda".
           {"CUDA cuSPARSE failed: operation not supported", "cusparse", "CUSPARSE_STATUS_NOT_SUPPORTED", kMessage,
            kUnsupported},
           {"cusolver error: CUSOLVER_STATUS_NOT_SUPPORTED", "cusolver", "CUSOLVER_STATUS_NOT_SUPPORTED", kName,
            kUnsupported},
           {"curand: CURAND_STATUS_ALLOCATION_FAILED", "curand", "CURAND_STATUS_ALLOCATION_FAILED", kName, kOom},
           {"nvrtc: NVRTC_ERROR_INVALID_OPTION", "nvrtc", "NVRTC_ERROR_INVALID_OPTION", kName, kUnsupported},
           {"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
            "1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
            "nccl", "ncclSystemError", kMessage, kInfraError},
           {"ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
            "prematurely.",
            "nccl", "ncclRemoteError", kName, kInfraError},
           {"NCCL failure: remote process exited or there was a network error", "nccl", "ncclRemoteError", kMessage,
            kInfraError},
           {"NCCL error: ncclResult 5", "nccl", "ncclInvalidUsage", kNumber, kCrashed},
       })
    ExpectHit(w);
}

TEST(FindStatus, AbslCodes) {
  for (const Want& w : std::initializer_list<Want>{
           {"jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: 7", "absl",
            "DEADLINE_EXCEEDED", kName, kTimeout},
           {"XlaRuntimeError: UNIMPLEMENTED: DNN library does not support this", "absl", "UNIMPLEMENTED", kName,
            kUnsupported},
           {"INTERNAL: Failed to execute XLA Runtime executable", "absl", "INTERNAL", kName, kCrashed},
           {"XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.2GiB.", "absl",
            "RESOURCE_EXHAUSTED", kName, kOom},
           {"<_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE", "absl", "UNAVAILABLE",
            kName, kInfraError},
           {"rpc failed: error_code=INTERNAL", "absl", "INTERNAL", kName, kCrashed},
           {"grpc call ended with status code UNAVAILABLE", "absl", "UNAVAILABLE", kName, kInfraError},
       })
    ExpectHit(w);
}

TEST(FindStatus, ErrnoAndSignals) {
  for (const Want& w : std::initializer_list<Want>{
           {"OSError: [Errno 28] No space left on device", "errno", "ENOSPC", kMessage, kInfraError},
           {"write failed: No space left on device", "errno", "ENOSPC", kMessage, kInfraError},
           {"ConnectionRefusedError: [Errno 111] Connection refused", "errno", "ECONNREFUSED", kMessage, kCrashed},
           {"TimeoutError: [Errno 110] Connection timed out", "errno", "ETIMEDOUT", kMessage, kTimeout},
           {"OSError: [Errno 98] Address already in use", "errno", "EADDRINUSE", kMessage, kInfraError},
           {"PermissionError: [Errno 13] Permission denied: '/data'", "errno", "EACCES", kMessage, kCrashed},
           {"socket write failed, errno=28", "errno", "ENOSPC", kNumber, kInfraError},
           {"mmap: ENOMEM", "errno", "ENOMEM", kName, kOom},
           {"Bus error (core dumped)", "signals", "SIGBUS", kMessage, kCrashed},
           {"Segmentation fault (core dumped)", "signals", "SIGSEGV", kMessage, kCrashed},
           {"Fatal Python error: Segmentation fault", "signals", "SIGSEGV", kMessage, kCrashed},
           {"Fatal Python error: Aborted", "signals", "SIGABRT", kMessage, kCrashed},
           {"Killed", "signals", "SIGKILL", kMessage, kCrashed},
           {"bash: line 1:  4242 Killed                  python3 serve.py", "signals", "SIGKILL", kMessage, kCrashed},
           {"/bin/sh: 1: 4242 Terminated", "signals", "SIGTERM", kMessage, kCrashed},
           {"Aborted (core dumped)", "signals", "SIGABRT", kMessage, kCrashed},
           {"Alarm clock", "signals", "SIGALRM", kMessage, kTimeout},
           {"Caught signal 15 (SIGTERM), shutting down", "signals", "SIGTERM", kName, kCrashed},
           {"worker exited: killed by signal 9", "signals", "SIGKILL", kNumber, kCrashed},
           {"<Signals.SIGKILL: 9>", "signals", "SIGKILL", kName, kCrashed},
       })
    ExpectHit(w);
}

TEST(FindStatus, PythonExceptionsAreWrappers) {
  for (const Want& w : std::initializer_list<Want>{
           {"MemoryError", "python", "MemoryError", kName, kOom},
           {"E       AssertionError: assert 1 == 2", "python", "AssertionError", kName, kWrongOutput},
           {"[rank0]: NotImplementedError: Could not run 'aten::foo' with arguments from the 'CUDA' backend.",
            "python", "NotImplementedError", kName, kUnsupported},
           {"  KeyboardInterrupt", "python", "KeyboardInterrupt", kName, kCrashed},
           {"TimeoutError: the server did not answer", "python", "TimeoutError", kName, kTimeout},
           {"ValueError: bad shape", "python", "ValueError", kName, kCrashed},
       })
    ExpectHit(w);
}

TEST(FindStatus, RejectsWhatOnlyLooksLikeAStatus) {
  for (const char* line : {
           "the INTERNAL buffer is full",
           "INTERNAL",
           "NOT_FOUND",
           "Internal: something",
           "invalid argument",
           "Everything OK so far",
           "ok: done",
           "Killed 3 processes",
           "The job was Terminated by the user",
           "Built with CUDA 12.4 and cuDNN 9.1",
           "Process exited with exit code 2 (CUDA)",
           "CUDA subprocess returned non-zero exit status 1",
           "NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/IPC",
           "host:1234:5678 [1] NCCL INFO comm 0x55d rank 1 nranks 2 cudaDev 1 - Init COMPLETE",
           "Using device cuda:1",
           "CUDA_VISIBLE_DEVICES=2",
           "Loaded 5 modules; error 2 times",
           "  File \"x.py\", line 3, in <module>: ValueError",
           "raise ValueError('bad')",
           "Permission denied",
           "PCIe bus error detected",
           "cudaErrorSystemNotReadyX happened",
           "SIGSEGVs are bad",
           "The device ran out of memory",
           "valueerror: lowercase is not a type",
           "DEADLINE_EXCEEDED deadline",
           "warning: CUDA graph captured 12 nodes",
       })
    EXPECT_FALSE(Find(line).has_value()) << line << " -> " << Find(line)->value->name;
}

TEST(FindStatus, EveryNameFindsItsValue) {
  for (const StatusVocabulary* voc : StatusVocabularies()) {
    for (const StatusValue& v : voc->values) {
      std::string line = voc->id == "python" ? std::string(v.name) + ": boom"
                         : voc->id == "absl" ? "status: " + std::string(v.name) + ": boom"
                                             : "failed with " + std::string(v.name) + " here";
      std::optional<StatusHit> hit = Find(line);
      ASSERT_TRUE(hit.has_value()) << line;
      EXPECT_EQ(hit->value, &v) << line << " -> " << hit->value->name;
      EXPECT_EQ(hit->how, StatusHow::kName) << line;
      EXPECT_TRUE(HasNeedle(line)) << line;
    }
  }
}

TEST(FindStatus, EveryMessageFindsAValueWithThatText) {
  for (const StatusVocabulary* voc : StatusVocabularies()) {
    for (const StatusValue& v : voc->values) {
      if (v.message.empty()) continue;
      std::string line = voc->id == "signals" ? std::string(v.message)
                                              : std::string(voc->context.front()) + ": " + std::string(v.message);
      std::optional<StatusHit> hit = Find(line);
      ASSERT_TRUE(hit.has_value()) << line;
      EXPECT_TRUE(HasNeedle(line)) << line;
      if (hit->how == StatusHow::kName) continue;  // cuDNN's and NVRTC's texts are names
      EXPECT_EQ(hit->how, StatusHow::kMessage) << line;
      EXPECT_EQ(Lowered(hit->value->message), Lowered(v.message)) << line << " -> " << hit->value->name;
    }
  }
}

TEST(FindStatus, DifferingLowerIsNoMatch) { EXPECT_FALSE(FindStatus("ENOSPC", "enospc!").has_value()); }

TEST(FindStatus, AMillionCallsTakeWellUnderASecond) {
  const std::vector<std::string> lines = {
      "RuntimeError: CUDA error: an illegal memory access was encountered",
      "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.10 GiB of which 1.20 GiB is free.",
      "INFO 01-01 12:00:00 [model_runner.py:1234] Loading model weights took 14.99 GB and 3.2 seconds (CUDA graphs)",
      "host:1234:5678 [1] NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/IPC/read",
      "XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call "
      "'xla.gpu.func.launch' failed: CUDA_ERROR_ILLEGAL_ADDRESS",
      "OSError: [Errno 28] No space left on device: '/tmp/x'",
      "Processed prompts: 100% 128/128 [00:03<00:00, 41.2 it/s, est. speed input: 5300 toks/s, output: 800 toks/s]",
      "Traceback (most recent call last):",
  };
  std::vector<std::string> lowers;
  for (const std::string& l : lines) lowers.push_back(Lowered(l));
  Find("warm up");
  size_t found = 0;
  const auto start = std::chrono::steady_clock::now();
  constexpr int kCalls = 1'000'000;
  for (int i = 0; i < kCalls; ++i) {
    const size_t k = static_cast<size_t>(i) % lines.size();
    found += FindStatus(lines[k], lowers[k]).has_value();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ timing ] %d FindStatus calls on typical lines: %.3f s (%.0f ns a call), %zu hits\n", kCalls,
              seconds, seconds * 1e9 / kCalls, found);
  RecordProperty("seconds", std::to_string(seconds));
  EXPECT_EQ(found, static_cast<size_t>(kCalls / 8 * 4));
  EXPECT_LT(seconds, 5.0);  // a loose bound, for slow sanitizer builds; the printed time is the measure
}

}  // namespace
}  // namespace gauntlet::classifier
