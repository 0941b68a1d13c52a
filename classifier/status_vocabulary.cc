// FindStatus: which status value a log line names (classifier/status_vocabulary.h). The tables are
// in classifier/status/ (vocabularies.h has the verdict policy); this file builds, once, the lookup
// structures over them and applies the matching rules below.
//
// Matching rules, per way of naming a value:
//  - Name: a whole word (the bytes around it are not [A-Za-z0-9_]). CUDA and library enumerators
//    match as the header spells them or all upper or all lower case. errno and signal names match
//    exactly. absl codes are common English words (INTERNAL, OK, UNKNOWN), so one matches exactly
//    and only followed by ':' (absl's Status::ToString prints "CODE: message", XLA
//    "XlaRuntimeError: INTERNAL: ...") or after a status-code word: "StatusCode.", "StatusCode::",
//    "status code", "status_code", "error_code", "error code", "code=" / "code:". A Python exception
//    matches exactly and only as the type at the start of the line ("Name: message", or the line
//    is just "Name"), after leading blanks, a pytest "E   " prefix or a torchrun "[rankN]:" prefix.
//  - Message: case-insensitive, whole words at its ends (a trailing '.' of the text is not
//    required). A generic message (under 20 bytes, two words or fewer, or the same text in another
//    vocabulary family, as EPERM's "Operation not permitted" and cudaErrorNotPermitted's) needs one
//    of its vocabulary's context words on the line; so do all of cuBLAS's and cuSPARSE's, which
//    describe a failure without naming the library. Signal texts ("Killed", "Aborted") are what a
//    shell prints for a child that died: they match as the whole line, after the shell's
//    "<pid> ", after "Fatal Python error: ", or before " (core dumped)"; "Segmentation fault" and
//    "Floating point exception" also anywhere, as nothing else says them.
//  - Number: a vocabulary's context word on the line and a number right after an error word:
//    "error 802", "error: 802", "error code 802", "code=802", "returned 802", "status 802",
//    "cudaError 802", "CUresult 802" (a word ending in error, result, status or _code), the same
//    bracketed ("error (802)", "failed [802]"); errno takes "[Errno 28]" and "os error 28", signals
//    "signal 11". Never a bare number, a version ("CUDA 12.4"), "cuda:1", nor a process's exit
//    status ("exit code 2", "returned non-zero exit status 1").
// Among several hits on a line: Python's exception types and absl's codes are wrappers, carrying
// another vocabulary's status as their message ("RuntimeError: CUDA error: out of memory",
// "INTERNAL: ... CUDA_ERROR_OUT_OF_MEMORY"), so any other vocabulary's hit beats theirs. Then, as
// the header says, a name beats a message beats a number, then the longer match; then the hit
// whose vocabulary has the longer context word on the line ("cusparse" over "cuda"); then the
// earlier vocabulary in StatusVocabularies().
//
// Cost: one Aho-Corasick pass over the line finds every name, message and context word it holds;
// only those are then checked where they occur. Numbers are scanned only when a context word is
// on the line.
#include "classifier/status_vocabulary.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "classifier/aho_corasick.h"
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

bool SvIsWord(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool SvIsDigit(char c) { return c >= '0' && c <= '9'; }
bool SvIsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
char SvLower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
char SvUpper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

std::string SvToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = SvLower(c);
  return out;
}

enum class SvNameRule : uint8_t { kIdentifier, kExact, kStatusCode, kException };
// Which words may stand right before a number for this vocabulary (see the file comment).
enum class SvNumberRule : uint8_t { kNone, kErrorWord, kErrno, kSignal };

struct SvRules {
  SvNameRule names = SvNameRule::kIdentifier;
  SvNumberRule numbers = SvNumberRule::kErrorWord;
  bool wrapper = false;
  bool messages_need_context = false;
  bool shell_messages = false;
  // Vocabularies of one family share message texts without ambiguity: the CUDA driver's messages
  // are the runtime's.
  std::string_view family;
};

SvRules SvRulesFor(std::string_view id) {
  SvRules r;
  r.family = id;
  if (id == "cuda_runtime" || id == "cuda_driver") r.family = "cuda";
  if (id == "cublas" || id == "cusparse") r.messages_need_context = true;
  if (id == "errno") r.names = SvNameRule::kExact, r.numbers = SvNumberRule::kErrno;
  if (id == "signals") r.names = SvNameRule::kExact, r.numbers = SvNumberRule::kSignal, r.shell_messages = true;
  if (id == "absl") r.names = SvNameRule::kStatusCode, r.wrapper = true;
  if (id == "python") r.names = SvNameRule::kException, r.numbers = SvNumberRule::kNone, r.wrapper = true;
  return r;
}

constexpr size_t kMaxVocabularies = 32;

struct SvEntry {
  uint16_t vocab = 0;
  const StatusValue* value = nullptr;
  bool generic = false;  // a message that needs its vocabulary's context word
};

// One distinct lowercase text and every role it plays: a name, a message, a context word.
struct SvPattern {
  std::string text;
  std::vector<SvEntry> names, messages;
  std::vector<uint16_t> contexts;
};

struct SvIndex {
  std::vector<const StatusVocabulary*> vocabs;
  std::vector<SvRules> rules;
  std::vector<SvPattern> patterns;
  std::vector<std::unordered_map<int64_t, const StatusValue*>> by_code;
  std::vector<std::string> needles;
  std::unique_ptr<AhoCorasick> ac;
};

// The text a message matches by: lowercase, without a final '.' ("... unsupported toolchain.").
std::string SvMessageText(std::string_view message) {
  while (!message.empty() && (message.back() == '.' || SvIsBlank(message.back()))) message.remove_suffix(1);
  return SvToLower(message);
}

bool SvIsGenericText(std::string_view text) {
  size_t words = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (!SvIsBlank(text[i]) && (i == 0 || SvIsBlank(text[i - 1]))) ++words;
  return text.size() < 20 || words <= 2;
}

std::unique_ptr<SvIndex> SvBuildIndex() {
  auto ix = std::make_unique<SvIndex>();
  ix->vocabs = StatusVocabularies();
  // FindStatus keeps per-vocabulary context lengths in a fixed array.
  if (ix->vocabs.size() > kMaxVocabularies) throw std::logic_error("status vocabularies: raise kMaxVocabularies");
  std::unordered_map<std::string, size_t> at;  // text -> pattern
  auto pattern = [&](const std::string& text) -> SvPattern& {
    auto [it, fresh] = at.try_emplace(text, ix->patterns.size());
    if (fresh) ix->patterns.push_back(SvPattern{text, {}, {}, {}});
    return ix->patterns[it->second];
  };
  for (uint16_t v = 0; v < ix->vocabs.size(); ++v) {
    const StatusVocabulary& voc = *ix->vocabs[v];
    ix->rules.push_back(SvRulesFor(voc.id));
    ix->by_code.emplace_back();
    std::set<std::string> messages;
    for (const StatusValue& value : voc.values) {
      pattern(SvToLower(value.name)).names.push_back({v, &value, false});
      ix->by_code[v].try_emplace(value.code, &value);  // an alias's number resolves to the first name
      std::string text = SvMessageText(value.message);
      if (!text.empty() && messages.insert(text).second) pattern(text).messages.push_back({v, &value, false});
    }
    for (std::string_view word : voc.context) pattern(SvToLower(word)).contexts.push_back(v);
  }
  for (SvPattern& p : ix->patterns) {
    std::set<std::string_view> families;
    for (const SvEntry& e : p.messages) families.insert(ix->rules[e.vocab].family);
    for (SvEntry& e : p.messages)
      e.generic = families.size() > 1 || SvIsGenericText(p.text) || ix->rules[e.vocab].messages_need_context;
  }
  std::vector<std::string> texts;
  for (const SvPattern& p : ix->patterns) texts.push_back(p.text);
  ix->ac = std::make_unique<AhoCorasick>(texts);

  // The needles a line must hold to have a hit: every pattern, except that an absl name needs
  // its ':' or a status-code word, all of which contain "code" (a bare "ok" would make most lines
  // candidates: "token", "look").
  std::set<std::string> seen;
  auto add = [&](std::string s) {
    if (seen.insert(s).second) ix->needles.push_back(std::move(s));
  };
  for (const SvPattern& p : ix->patterns) {
    bool absl_only = !p.names.empty() && p.messages.empty() && p.contexts.empty();
    for (const SvEntry& e : p.names) absl_only = absl_only && ix->rules[e.vocab].names == SvNameRule::kStatusCode;
    if (!absl_only) add(p.text);
    else add(p.text + ":");
  }
  add("code");
  return ix;
}

const SvIndex& SvGetIndex() {
  static const std::unique_ptr<SvIndex> ix = SvBuildIndex();
  return *ix;
}

// The distinct pattern ids one scan found; no allocation for the usual handful.
class SvIdSet {
 public:
  void Insert(uint32_t id) {
    for (size_t i = 0; i < n_; ++i)
      if (small_[i] == id) return;
    if (n_ < small_.size()) {
      small_[n_++] = id;
    } else if (std::find(more_.begin(), more_.end(), id) == more_.end()) {
      more_.push_back(id);
    }
  }
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < n_; ++i) f(small_[i]);
    for (uint32_t id : more_) f(id);
  }
  bool empty() const { return n_ == 0; }

 private:
  std::array<uint32_t, 24> small_{};
  size_t n_ = 0;
  std::vector<uint32_t> more_;
};

// Where a line's content starts: after leading blanks, a pytest "E   " prefix and a torchrun
// "[rankN]:" prefix.
size_t SvContentStart(std::string_view line) {
  size_t i = 0;
  auto blanks = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  blanks();
  if (line.substr(i, 5) == "[rank") {
    size_t j = i + 5;
    while (j < line.size() && SvIsDigit(line[j])) ++j;
    if (j > i + 5 && line.substr(j, 2) == "]:") i = j + 2, blanks();
  }
  if (i + 1 < line.size() && line[i] == 'E' && line[i + 1] == ' ') ++i, blanks();
  return i;
}

std::string_view SvTrimRight(std::string_view s) {
  while (!s.empty() && SvIsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// The identifier ([a-z0-9_]) that ends right before `end` in `lower`.
std::string_view SvWordBefore(std::string_view lower, size_t end) {
  size_t b = end;
  while (b > 0 && SvIsWord(lower[b - 1])) --b;
  return lower.substr(b, end - b);
}

size_t SvSkipBlanksBack(std::string_view s, size_t i) {
  while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t')) --i;
  return i;
}

// absl: "StatusCode.UNAVAILABLE", "status code INTERNAL", "error_code=INTERNAL", "code: INTERNAL".
bool SvAfterStatusCodeWord(std::string_view lower, size_t pos) {
  size_t i = SvSkipBlanksBack(lower, pos);
  char sep = ' ';
  if (i >= 2 && lower.substr(i - 2, 2) == "::") {
    i -= 2, sep = ':';
  } else if (i > 0 && (lower[i - 1] == '.' || lower[i - 1] == '=' || lower[i - 1] == ':')) {
    sep = lower[--i];
  }
  i = SvSkipBlanksBack(lower, i);
  std::string_view w = SvWordBefore(lower, i);
  if (w == "statuscode" || w == "status_code" || w == "error_code" || w == "errorcode") return true;
  if (w != "code") return false;
  if (sep == '=' || sep == ':') return true;
  std::string_view before = SvWordBefore(lower, SvSkipBlanksBack(lower, i - w.size()));
  return before == "status" || before == "error";
}

bool SvNameMatches(const SvRules& r, std::string_view line, std::string_view lower, size_t pos, std::string_view name) {
  std::string_view token = line.substr(pos, name.size());
  switch (r.names) {
    case SvNameRule::kIdentifier: {
      if (token == name) return true;
      bool upper = true, lowercase = true;
      for (size_t i = 0; i < name.size(); ++i) {
        upper = upper && token[i] == SvUpper(name[i]);
        lowercase = lowercase && token[i] == SvLower(name[i]);
      }
      return upper || lowercase;
    }
    case SvNameRule::kExact:
      return token == name;
    case SvNameRule::kStatusCode:
      if (token != name) return false;
      return (pos + name.size() < line.size() && line[pos + name.size()] == ':') || SvAfterStatusCodeWord(lower, pos);
    case SvNameRule::kException: {
      if (token != name || pos != SvContentStart(line)) return false;
      std::string_view rest = SvTrimRight(line.substr(pos + name.size()));
      return rest.empty() || rest.front() == ':';
    }
  }
  return false;
}

// A signal's text as a shell or faulthandler prints it (see the file comment).
bool SvSignalTextMatches(std::string_view line, std::string_view lower, size_t pos, size_t len,
                       const StatusValue& value) {
  if (value.name == "SIGSEGV" || value.name == "SIGFPE") return true;
  std::string_view after = SvTrimRight(lower.substr(pos + len));
  if (after.starts_with(" (core dumped)")) return true;
  if (pos == SvContentStart(line) && (after.empty() || after == " (core dumped)")) return true;
  constexpr std::string_view kFaultHandler = "fatal python error: ";
  if (pos >= kFaultHandler.size() && lower.substr(pos - kFaultHandler.size(), kFaultHandler.size()) == kFaultHandler)
    return true;
  // The shell's report on a job: "bash: line 1:  4242 Killed   python3 x.py", "[1]  4242 killed ...".
  size_t i = SvSkipBlanksBack(lower, pos);
  if (i == pos) return false;
  size_t digits_end = i;
  while (i > 0 && SvIsDigit(lower[i - 1])) --i;
  if (i == digits_end) return false;
  if (i > 0 && !SvIsBlank(lower[i - 1]) && lower[i - 1] != ':' && lower[i - 1] != ']') return false;
  return after.empty() || after.front() == ' ' || after.front() == '(';
}

struct SvCandidate {
  uint16_t vocab = 0;
  const StatusValue* value = nullptr;
  StatusHow how = StatusHow::kNumber;
  size_t length = 0;
  size_t context = 0;
  bool wrapper = false;
};

int SvHowRank(StatusHow how) { return how == StatusHow::kName ? 2 : how == StatusHow::kMessage ? 1 : 0; }

bool SvBetter(const SvCandidate& a, const SvCandidate& b) {
  if (a.wrapper != b.wrapper) return !a.wrapper;
  if (SvHowRank(a.how) != SvHowRank(b.how)) return SvHowRank(a.how) > SvHowRank(b.how);
  if (a.length != b.length) return a.length > b.length;
  if (a.context != b.context) return a.context > b.context;
  return a.vocab < b.vocab;
}

// What the word before a number makes of it (see the file comment).
enum class SvLead : uint8_t { kNone, kErrorWord, kErrno, kSignal };

bool SvEndsWith(std::string_view s, std::string_view tail) { return s.size() >= tail.size() && s.ends_with(tail); }

SvLead SvLeadOf(std::string_view word, std::string_view previous, bool bracketed) {
  if (word == "signal") return SvLead::kSignal;
  if (word == "errno") return SvLead::kErrno;
  // A process's exit status is not a status of any vocabulary here.
  if (word.starts_with("exit") || word.starts_with("return_") || word == "returncode") return SvLead::kNone;
  if ((word == "code" || word == "status") && (previous == "exit" || previous == "return")) return SvLead::kNone;
  if (word == "code" || word == "returned" || word == "err" || word == "rc" || word == "ret") return SvLead::kErrorWord;
  if (SvEndsWith(word, "error") || SvEndsWith(word, "result") || SvEndsWith(word, "status") || SvEndsWith(word, "_code") ||
      word == "errorcode")
    return SvLead::kErrorWord;
  if (bracketed && (word == "failed" || word == "failure")) return SvLead::kErrorWord;
  return SvLead::kNone;
}

bool SvAccepts(SvNumberRule rule, SvLead lead, std::string_view word) {
  switch (rule) {
    case SvNumberRule::kNone: return false;
    case SvNumberRule::kErrorWord: return lead == SvLead::kErrorWord;
    case SvNumberRule::kErrno: return lead == SvLead::kErrno || (lead == SvLead::kErrorWord && word == "error");
    case SvNumberRule::kSignal: return lead == SvLead::kSignal;
  }
  return false;
}

template <typename Offer>
void SvScanNumbers(const SvIndex& ix, std::string_view lower, const std::array<uint8_t, kMaxVocabularies>& context,
                 Offer&& offer) {
  const size_t n = lower.size();
  for (size_t i = 0; i < n; ++i) {
    if (!SvIsDigit(lower[i])) continue;
    size_t j = i;
    while (j < n && SvIsDigit(lower[j])) ++j;
    const size_t start = i;
    i = j;  // the loop's ++i then moves past the run's end, which is not a digit
    if (start > 0 && (SvIsWord(lower[start - 1]) || lower[start - 1] == '.' || lower[start - 1] == '-')) continue;
    if (j - start > 6) continue;
    if (j < n && (SvIsWord(lower[j]) || (lower[j] == '.' && j + 1 < n && SvIsDigit(lower[j + 1])))) continue;
    size_t k = start;
    bool bracketed = false;
    if (start > 0 && (lower[start - 1] == '(' || lower[start - 1] == '[')) {
      const char close = lower[start - 1] == '(' ? ')' : ']';
      if (j >= n || lower[j] != close || (j + 1 < n && SvIsWord(lower[j + 1]))) continue;
      bracketed = true;
      k = start - 1;
    }
    k = SvSkipBlanksBack(lower, k);
    if (k > 0 && (lower[k - 1] == ':' || lower[k - 1] == '=' || lower[k - 1] == '#')) k = SvSkipBlanksBack(lower, k - 1);
    std::string_view word = SvWordBefore(lower, k);
    if (word.empty()) continue;
    std::string_view previous = SvWordBefore(lower, SvSkipBlanksBack(lower, k - word.size()));
    SvLead lead = SvLeadOf(word, previous, bracketed);
    if (lead == SvLead::kNone) continue;
    int64_t code = 0;
    for (size_t d = start; d < j; ++d) code = code * 10 + (lower[d] - '0');
    for (uint16_t v = 0; v < ix.vocabs.size(); ++v) {
      if (!context[v] || !SvAccepts(ix.rules[v].numbers, lead, word)) continue;
      auto it = ix.by_code[v].find(code);
      if (it != ix.by_code[v].end()) offer(v, it->second, StatusHow::kNumber, j - start);
    }
  }
}

}  // namespace

const std::vector<std::string>& StatusNeedles() { return SvGetIndex().needles; }

std::string StatusHit::Signature() const {
  if (!value) return {};
  if (!value->key.empty()) return std::string(value->key);
  std::string s(Name(value->verdict));
  s += ':';
  s += vocabulary ? vocabulary->id : std::string_view("status");
  s += ':';
  s += value->name;
  return s;
}

std::optional<StatusHit> FindStatus(std::string_view line, std::string_view lower) {
  if (line.size() != lower.size()) return std::nullopt;
  const SvIndex& ix = SvGetIndex();
  SvIdSet hits;
  if (!ix.ac->Scan(lower, [&](uint32_t id) { hits.Insert(id); })) return std::nullopt;

  // The longest context word of each vocabulary on the line.
  std::array<uint8_t, kMaxVocabularies> context{};
  bool any_context = false;
  hits.ForEach([&](uint32_t id) {
    const SvPattern& p = ix.patterns[id];
    for (uint16_t v : p.contexts) {
      context[v] = static_cast<uint8_t>(std::max<size_t>(context[v], std::min<size_t>(p.text.size(), 255)));
      any_context = any_context || ix.rules[v].numbers != SvNumberRule::kNone;
    }
  });

  std::optional<SvCandidate> best;
  auto offer = [&](uint16_t v, const StatusValue* value, StatusHow how, size_t length) {
    SvCandidate c{v, value, how, length, context[v], ix.rules[v].wrapper};
    if (!best || SvBetter(c, *best)) best = c;
  };
  hits.ForEach([&](uint32_t id) {
    const SvPattern& p = ix.patterns[id];
    if (p.names.empty() && p.messages.empty()) return;
    const size_t len = p.text.size();
    const bool word_start = SvIsWord(p.text.front()), word_end = SvIsWord(p.text.back());
    for (size_t pos = lower.find(p.text); pos != std::string_view::npos; pos = lower.find(p.text, pos + 1)) {
      const bool open_before = pos == 0 || !SvIsWord(lower[pos - 1]);
      const bool open_after = pos + len == lower.size() || !SvIsWord(lower[pos + len]);
      if (open_before && open_after)
        for (const SvEntry& e : p.names)
          if (SvNameMatches(ix.rules[e.vocab], line, lower, pos, e.value->name))
            offer(e.vocab, e.value, StatusHow::kName, len);
      if ((word_start && !open_before) || (word_end && !open_after)) continue;
      for (const SvEntry& e : p.messages) {
        const SvRules& r = ix.rules[e.vocab];
        const bool ok = r.shell_messages ? SvSignalTextMatches(line, lower, pos, len, *e.value)
                                         : !e.generic || context[e.vocab] > 0;
        if (ok) offer(e.vocab, e.value, StatusHow::kMessage, len);
      }
    }
  });
  if (any_context) SvScanNumbers(ix, lower, context, offer);
  if (!best) return std::nullopt;
  return StatusHit{ix.vocabs[best->vocab], best->value, best->how};
}

}  // namespace gauntlet::classifier
