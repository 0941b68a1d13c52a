// Prints the name / number / message columns of the status tables in classifier/status/*.cc,
// read from the headers and libraries installed here, so the tables can be regenerated when CUDA,
// cuDNN, NCCL, glibc or Python change. The verdict and reason columns are a person's judgement and
// are not printed: paste new rows, then give each a verdict and a reason.
//
// Build and run (no GPU needed: the *GetErrorString functions are pure lookups; each library is
// dlopen()ed, so a missing one only leaves its messages empty and says so):
//   g++ -std=c++20 -O1 scripts/gen-status-messages.cc -ldl -o /tmp/gen-status-messages
//   LD_LIBRARY_PATH=$CUDA_HOME/lib64 /tmp/gen-status-messages [VOCABULARY...]
// CUDA_HOME defaults to /usr/local/cuda. Vocabularies: cuda_runtime cuda_driver cublas cudnn cufft
// cusparse cusolver curand nvrtc nccl errno signals python (default: all).
//
// The enumerators are read from the header text (comments stripped; each "NAME [ATTRIBUTE] = expr"
// item of the enum body; an expression may name an earlier enumerator). errno and signal names are
// read from their #define lines. cuGetErrorString needs libcuda.so.1, which only a machine with the
// NVIDIA driver has; where it is missing (or is the toolkit's stub) the driver's rows print the
// runtime's text for the same number, marked "runtime text", for a person to check the meaning.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Enumerator {
  std::string name;
  long long value = 0;
  bool alias = false;  // #define'd as another name (EWOULDBLOCK EAGAIN): listed after the others
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Comments out, so a "/* ... = 3 */" inside the body never reads as an item.
std::string StripComments(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t e = s.find("*/", i + 2);
      i = e == std::string::npos ? s.size() : e + 2;
      out.push_back(' ');
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// The text between the braces of the enum called `type`: either "typedef enum [tag] { ... } type;"
// or "enum [attributes] type { ... }".
std::string EnumBody(const std::string& text, const std::string& type) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex("\\}\\s*" + type + "\\s*;"))) {
    size_t close = static_cast<size_t>(m.position(0));
    int depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
      if (text[i] == '}') ++depth;
      if (text[i] == '{' && --depth == 0) return text.substr(i + 1, close - i - 1);
    }
  }
  if (std::regex_search(text, m, std::regex("enum\\s+(\\w+\\s+)*" + type + "\\s*\\{"))) {
    size_t open = static_cast<size_t>(m.position(0) + m.length(0));
    size_t close = text.find('}', open);
    return text.substr(open, close - open);
  }
  return {};
}

// A constant expression of the kinds these headers use: decimal or hex literals, earlier
// enumerators, unary minus, + - | << and parentheses.
class Expr {
 public:
  Expr(const std::string& s, const std::map<std::string, long long>& known) : s_(s), known_(known) {}
  bool Eval(long long* out) {
    ok_ = true;
    *out = Or();
    Skip();
    return ok_ && i_ == s_.size();
  }

 private:
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  long long Or() {
    long long v = Shift();
    for (Skip(); i_ < s_.size() && s_[i_] == '|'; Skip()) ++i_, v |= Shift();
    return v;
  }
  long long Shift() {
    long long v = Sum();
    for (Skip(); s_.compare(i_, 2, "<<") == 0; Skip()) i_ += 2, v <<= Sum();
    return v;
  }
  long long Sum() {
    long long v = Unary();
    for (Skip(); i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'); Skip()) {
      char op = s_[i_++];
      long long r = Unary();
      v = op == '+' ? v + r : v - r;
    }
    return v;
  }
  long long Unary() {
    Skip();
    if (i_ < s_.size() && s_[i_] == '-') return ++i_, -Unary();
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      long long v = Or();
      Skip();
      if (i_ < s_.size() && s_[i_] == ')') ++i_; else ok_ = false;
      return v;
    }
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    std::string tok = s_.substr(b, i_ - b);
    if (tok.empty()) return ok_ = false, 0;
    if (std::isdigit(static_cast<unsigned char>(tok[0]))) return std::strtoll(tok.c_str(), nullptr, 0);
    auto it = known_.find(tok);
    if (it == known_.end()) return ok_ = false, 0;
    return it->second;
  }
  const std::string& s_;
  const std::map<std::string, long long>& known_;
  size_t i_ = 0;
  bool ok_ = true;
};

std::vector<Enumerator> ParseEnum(const std::string& header, const std::string& type) {
  std::string body = EnumBody(StripComments(ReadFile(header)), type);
  std::vector<Enumerator> out;
  std::map<std::string, long long> known;
  long long next = 0;
  std::stringstream items(body);
  for (std::string item; std::getline(items, item, ',');) {
    std::smatch m;
    // "NAME", "NAME = expr", "NAME ATTRIBUTE_MACRO = expr".
    if (!std::regex_search(item, m, std::regex("^\\s*([A-Za-z_]\\w*)(\\s+[A-Za-z_]\\w*)*\\s*(=\\s*([^]*?))?\\s*$")))
      continue;
    Enumerator e{m[1].str(), next};
    if (m[3].matched && !Expr(m[4].str(), known).Eval(&e.value)) {
      std::fprintf(stderr, "cannot evaluate %s = %s\n", e.name.c_str(), m[4].str().c_str());
      continue;
    }
    known[e.name] = e.value;
    next = e.value + 1;
    out.push_back(e);
  }
  return out;
}

// "#define NAME value" lines whose name matches `pattern`; a value may be an earlier name.
std::vector<Enumerator> ParseDefines(const std::vector<std::string>& headers, const std::string& pattern) {
  std::vector<Enumerator> out;
  std::map<std::string, long long> known;
  std::regex define("^\\s*#\\s*define\\s+(" + pattern + ")\\s+(\\w+)");
  for (const std::string& h : headers) {
    std::stringstream lines(StripComments(ReadFile(h)));
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, define) || known.count(m[1].str())) continue;
      long long v = 0;
      if (!Expr(m[2].str(), known).Eval(&v)) continue;
      known[m[1].str()] = v;
      out.push_back({m[1].str(), v, !std::isdigit(static_cast<unsigned char>(m[2].str()[0]))});
    }
  }
  std::stable_partition(out.begin(), out.end(), [](const Enumerator& e) { return !e.alias; });
  return out;
}

std::string Quote(const char* s) {
  std::string out = "\"";
  for (const char* p = s ? s : ""; *p; ++p) {
    if (*p == '"' || *p == '\\') out.push_back('\\');
    out.push_back(*p);
  }
  return out + "\"";
}

// The first sentence of the /** ... */ comment right before `name = ` in a header.
std::string HeaderSentence(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("\\b" + name + "\\s*="))) return {};
  size_t end = text.rfind("*/", static_cast<size_t>(m.position(0)));
  size_t begin = end == std::string::npos ? std::string::npos : text.rfind("/**", end);
  if (begin == std::string::npos) return {};
  std::string words;
  std::stringstream comment(text.substr(begin + 3, end - begin - 3));
  for (std::string w; comment >> w;)
    if (w != "*") words += (words.empty() ? "" : " ") + w;
  size_t stop = words.find(". ");
  return stop == std::string::npos ? words : words.substr(0, stop + 1);
}

void* Open(const char* lib) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) std::printf("  // %s not loaded (%s): messages left empty\n", lib, dlerror());
  return h;
}

template <typename F>
F Symbol(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

void Row(const std::string& name, long long code, const char* message, const char* note = nullptr) {
  std::printf("    {\"%s\", %lld, %s},%s%s\n", name.c_str(), code, Quote(message).c_str(), note ? "  // " : "",
              note ? note : "");
}

using IntToString = const char* (*)(int);

// One library vocabulary whose string function takes the enum (as an int) and returns the text.
void Library(const std::string& include, const char* title, const char* header, const char* type,
             const char* lib, const char* fn) {
  std::printf("// %s: %s %s, %s\n", title, header, type, fn ? fn : "no string function");
  auto values = ParseEnum(include + "/" + header, type);
  auto str = fn ? Symbol<IntToString>(Open(lib), fn) : nullptr;
  for (const auto& e : values) Row(e.name, e.value, str ? str(static_cast<int>(e.value)) : "");
}

bool Want(const std::vector<std::string>& want, const char* id) {
  if (want.empty()) return true;
  for (const auto& w : want)
    if (w == id) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> want(argv + 1, argv + argc);
  const char* home = std::getenv("CUDA_HOME");
  const std::string inc = std::string(home && *home ? home : "/usr/local/cuda") + "/include";

  if (Want(want, "cuda_runtime"))
    Library(inc, "cuda_runtime", "driver_types.h", "cudaError", "libcudart.so", "cudaGetErrorString");

  if (Want(want, "cuda_driver")) {
    std::printf("// cuda_driver: cuda.h CUresult, cuGetErrorString\n");
    using CuString = int (*)(int, const char**);
    auto cu = Symbol<CuString>(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), "cuGetErrorString");
    auto rt = Symbol<IntToString>(Open("libcudart.so"), "cudaGetErrorString");
    const std::string cuda_h = ReadFile(inc + "/cuda.h");
    std::map<long long, std::string> runtime;
    for (const auto& e : ParseEnum(inc + "/driver_types.h", "cudaError")) runtime[e.value] = e.name;
    for (const auto& e : ParseEnum(inc + "/cuda.h", "CUresult")) {
      const char* text = nullptr;
      if (cu && cu(static_cast<int>(e.value), &text) == 0 && text) {
        Row(e.name, e.value, text);
      } else if (rt && runtime.count(e.value)) {
        std::string note = "runtime text, as " + runtime[e.value];
        Row(e.name, e.value, rt(static_cast<int>(e.value)), note.c_str());
      } else {
        Row(e.name, e.value, HeaderSentence(cuda_h, e.name).c_str(), "header comment: no runtime value of this number");
      }
    }
  }
  if (Want(want, "cublas"))
    Library(inc, "cublas", "cublas_api.h", "cublasStatus_t", "libcublas.so", "cublasGetStatusString");
  if (Want(want, "cudnn"))
    Library(inc, "cudnn", "cudnn_graph.h", "cudnnStatus_t", "libcudnn.so", "cudnnGetErrorString");
  if (Want(want, "cufft")) Library(inc, "cufft", "cufft.h", "cufftResult", nullptr, nullptr);
  if (Want(want, "cusparse"))
    Library(inc, "cusparse", "cusparse.h", "cusparseStatus_t", "libcusparse.so", "cusparseGetErrorString");
  if (Want(want, "cusolver")) Library(inc, "cusolver", "cusolver_common.h", "cusolverStatus_t", nullptr, nullptr);
  if (Want(want, "curand")) Library(inc, "curand", "curand.h", "curandStatus", nullptr, nullptr);
  if (Want(want, "nvrtc")) Library(inc, "nvrtc", "nvrtc.h", "nvrtcResult", "libnvrtc.so", "nvrtcGetErrorString");
  if (Want(want, "nccl")) Library(inc, "nccl", "nccl.h", "ncclResult_t", "libnccl.so.2", "ncclGetErrorString");

  if (Want(want, "errno")) {
    std::printf("// errno: asm-generic/errno-base.h, asm-generic/errno.h, bits/errno.h; strerror\n");
    for (const auto& e : ParseDefines({"/usr/include/asm-generic/errno-base.h", "/usr/include/asm-generic/errno.h",
                                       "/usr/include/x86_64-linux-gnu/bits/errno.h"},
                                      "E[A-Z0-9]+"))
      Row(e.name, e.value, std::strerror(static_cast<int>(e.value)));
  }
  if (Want(want, "signals")) {
    std::printf("// signals: bits/signum-generic.h, bits/signum-arch.h; strsignal\n");
    auto sigs = ParseDefines({"/usr/include/x86_64-linux-gnu/bits/signum-generic.h",
                              "/usr/include/x86_64-linux-gnu/bits/signum-arch.h"},
                             "SIG[A-Z0-9]+");
    // By number, the aliases (SIGIOT, SIGIO, SIGCLD) after the 31.
    std::stable_sort(sigs.begin(), sigs.end(), [](const Enumerator& a, const Enumerator& b) {
      return a.alias != b.alias ? !a.alias : !a.alias && a.value < b.value;
    });
    for (const auto& e : sigs)
      if (e.value >= 1 && e.value <= 31) Row(e.name, e.value, strsignal(static_cast<int>(e.value)));
  }
  if (Want(want, "python")) {
    // The classes in builtins that derive from BaseException, in the order of the docs' hierarchy
    // (depth first from BaseException, subclasses in definition order); code = the row's index.
    std::printf("// python: builtins exceptions, hierarchy order\n");
    const char* script =
        "import builtins,sys\n"
        "names={}\n"
        "aliases=[]\n"
        "for n,v in vars(builtins).items():\n"
        "  if isinstance(v,type) and issubclass(v,BaseException):\n"
        "    if v in names: aliases.append(n)\n"
        "    else: names[v]=n\n"
        "seen=[]\n"
        "def walk(c):\n"
        "  if c in names and c not in seen: seen.append(c)\n"
        "  for s in c.__subclasses__():\n"
        "    if s in names: walk(s)\n"
        "walk(BaseException)\n"
        "order=[names[c] for c in seen]+aliases\n"
        "print(sys.version.split()[0]); print(*order)\n";
    std::string cmd = "python3 -c '" + std::string(script) + "'";
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char version[64] = {};
      if (std::fscanf(p, "%63s", version) == 1) std::printf("  // Python %s\n", version);
      char name[128];
      for (long long i = 0; std::fscanf(p, "%127s", name) == 1; ++i) Row(name, i, "");
      pclose(p);
    }
  }
  return 0;
}
