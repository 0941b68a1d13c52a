// Fuzzes the failure classifier (classifier/classifier.h): the log bytes of a stage, which
// come from whatever the stage's process printed.
//
// The first byte chooses how the process ended (nothing known, an exit code, a signal, a timeout,
// a cancel) and seeds the chunking; the rest is the log. What must hold: ClassifyText never throws
// or crashes; the verdict is one of the vocabulary's, "passed" with no signature or evidence, any
// other with a signature; and Classifier::Feed over a random split of the same bytes (chunks of 1
// byte to a few KiB, lines cut anywhere) gives exactly the same verdict, signature and evidence, as
// the header promises: a worker feeds the log as the pipe delivers it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <random>
#include <string>
#include <string_view>

#include "core/signature_rule.h"
#include "core/verdict.h"
#include "classifier/classifier.h"

namespace {
using namespace gauntlet;
using namespace gauntlet::classifier;

[[noreturn]] void Fail(const char* what, std::string_view log, const Classification& a, const Classification& b) {
  std::fprintf(stderr,
               "\nFUZZ FINDING: %s\n  one-shot: %s | %s | %s\n  chunked:  %s | %s | %s\n  log (%zu bytes)\n", what,
               std::string(Name(a.verdict)).c_str(), a.signature.c_str(), a.evidence.c_str(),
               std::string(Name(b.verdict)).c_str(), b.signature.c_str(),
               b.evidence.c_str(), log.size());
  std::abort();
}

ExitInfo Exit(uint8_t b) {
  static const int kCodes[] = {1, 2, 137, 134, 139, 255};
  static const int kSignals[] = {9, 11, 6, 7, 15};
  ExitInfo e;
  switch (b % 6) {
    case 0: break;  // unknown: the log alone decides
    case 1: e.exit_code = 0; break;
    case 2: e.exit_code = kCodes[(b >> 3) % 6]; break;
    case 3: e.signal = kSignals[(b >> 3) % 5]; break;
    case 4: e.timed_out = true; break;
    case 5: e.cancelled = true; break;
  }
  return e;
}

// A suite's own rules, as torch-sdpa and the fixture suites write them: a substring, a regex, a
// benign marker. Both paths classify with them.
const std::vector<SignatureRule>& Rules() {
  static const std::vector<SignatureRule> rules = [] {
    auto r = ParseSignatureRules(nlohmann::json::parse(R"([
      {"match": "No available kernel", "verdict": "unsupported"},
      {"match": "over tolerance: max abs diff [0-9.e+-]+", "regex": true, "verdict": "wrong_output",
       "signature": "wrong_output:tolerance"},
      {"match": "^WARNING: benign", "regex": true, "verdict": "passed"}])"));
    if (!r.ok()) std::abort();
    return *r;
  }();
  return rules;
}

bool Same(const Classification& a, const Classification& b) {
  return a.verdict == b.verdict && a.signature == b.signature && a.evidence == b.evidence;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ExitInfo exit = Exit(data[0]);
  const std::string_view log(reinterpret_cast<const char*>(data + 1), size - 1);
  const Classification whole = ClassifyText(log, exit, Rules());
  if (static_cast<int>(whole.verdict) >= kVerdictCount) Fail("not a verdict", log, whole, whole);
  if (whole.verdict == Verdict::kPassed && !(whole.signature.empty() && whole.evidence.empty()))
    Fail("passed with a signature or evidence", log, whole, whole);
  if (whole.verdict != Verdict::kPassed && whole.signature.empty()) Fail("a failure without a signature", log, whole, whole);

  // The split is seeded by the input itself, so a finding reproduces from its file alone.
  std::minstd_rand rng(data[0] * 2654435761u + static_cast<uint32_t>(size));
  Classifier c(Rules());
  for (size_t at = 0; at < log.size();) {
    size_t n = 1 + rng() % (rng() % 4 == 0 ? 4096 : 16);
    n = std::min(n, log.size() - at);
    c.Feed(log.substr(at, n));
    at += n;
  }
  const Classification chunked = c.Finish(exit);
  if (!Same(whole, chunked)) Fail("the result depends on how the log was chunked", log, whole, chunked);
  // Finish may be called again; it must not have consumed anything.
  if (!Same(chunked, c.Finish(exit))) Fail("a second Finish differs", log, whole, c.Finish(exit));
  return 0;
}
