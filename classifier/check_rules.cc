// The built-in rules that read a program's own checks and its end: status vocabulary values, failed
// checks, mismatch reports, deadlines, NCCL, fatal signals, native aborts, sanitizers, the shell's
// Killed, refusals in exception form and pytest's summary. Priority order continues builtin_rules.cc's.
#include <array>
#include <cctype>

#include "classifier/builtin_rules.h"
#include "classifier/check_report.h"
#include "classifier/normalize.h"
#include "classifier/refusals.h"
#include "classifier/report_grammar.h"
#include "classifier/rule_words.h"
#include "classifier/status_vocabulary.h"

namespace gauntlet::classifier {
using namespace rule_words;

// A value of a status vocabulary (status_vocabulary.h: the CUDA runtime and driver, cuBLAS, cuDNN,
// cuFFT, cuSPARSE, cuSOLVER, cuRAND, NVRTC, NCCL, errno, absl) named on the line decides by its
// table: after the rules above, whose keys and fallback checks stay, before the generic ones below.
void BuiltinRules::AddStatusRule() {
  Add("status", StatusTriggerNeedles(), [](const LineContext& c) -> std::optional<RuleHit> {
    if (!c.exc && (c.parsed->level == LogLevel::kInfo || c.parsed->level == LogLevel::kDebug || IsAdvisory(c)))
      return std::nullopt;
    std::optional<StatusHit> s = FindStatus(c.raw, c.lower);
    if (!s || s->value->verdict == Verdict::kPassed) return std::nullopt;
    if (s->vocabulary->id == "python" || s->vocabulary->id == "signals") return std::nullopt;
    // A refusal says what it refuses (refusals.h): its family names the key (XLA's "UNIMPLEMENTED:
    // Unsupported algorithm ... TF32" is unsupported:dtype), the status code only the verdict.
    if (c.exc && s->value->verdict == Verdict::kUnsupported)
      if (std::optional<std::string> key = RefusalKey(*c.exc)) return Hit("status", Verdict::kUnsupported, *key);
    // NCCL's system and remote errors are real but echoed by every peer of a rank that failed first
    // (tier 2, as NCCL WARN lines); a deadline is the program's own report (tier 3, as `deadline`).
    Tier tier = Tier::kSpecific;
    if (s->vocabulary->id == "nccl" && s->value->verdict == Verdict::kInfraError) tier = Tier::kNccl;
    else if (s->value->verdict == Verdict::kTimeout) tier = Tier::kGeneric;
    return Hit("status", s->value->verdict, s->Signature(), tier);
  }, Basis::kStatus);
}

// The stage's own output checks, NCCL, fatal signals, then refusals in exception form and pytest's
// summary, last.
void BuiltinRules::AddCheckAndCrashRules() {
  // --- output checks inside the stage ------------------------------------------------------------------
  // A check of the program's own result that failed, in its framework's words (check_report.h):
  // an expected-versus-actual report is a wrong result wherever it appears. On an exception line
  // only an assertion type counts: "RuntimeError: expected ... got ..." validates an argument.
  Add("failed_check", CheckReportNeedles(), [](const LineContext& c) -> std::optional<RuleHit> {
    if (c.exc && c.exc->type.find("Assert") == std::string::npos && c.exc->type != "ComparisonFailure")
      return std::nullopt;
    if (!c.exc && (c.parsed->level == LogLevel::kInfo || c.parsed->level == LogLevel::kDebug ||
                   c.parsed->level == LogLevel::kWarning))
      return std::nullopt;
    std::string lower_msg = ToLowerAscii(c.parsed->message.substr(0, 4096));
    const CheckReport k = FailedCheck(lower_msg);
    if (k == CheckReport::kNone) return std::nullopt;
    return Hit("failed_check", Verdict::kWrongOutput,
               k == CheckReport::kResultLine ? "wrong_output:result_line" : "wrong_output:check_failed",
               Tier::kSpecific, false);
  });
  Add("mismatch",
      {"are not close", "are not equal", "not equal to tolerance", "mismatched elements", "mismatch",
       "elements differ", "values differ", "tolerance", "tol=", "margin of error", "nan detected", "contains nan",
       "absolute difference", "relative difference",
       "accuracy check failed"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        const bool nan = Has(c.lower, "nan detected") || Has(c.lower, "contains nan");
        if (!nan && !IsMismatchReport(c.lower)) return std::nullopt;
        if (!c.exc && IsAdvisory(c)) return std::nullopt;
        return Hit("mismatch", Verdict::kWrongOutput, nan ? "wrong_output:nan" : "wrong_output:mismatch", Tier::kSpecific,
                   false);
      });

  // --- NCCL ------------------------------------------------------------------------------------------
  Add("nccl",
      {"nccl warn", "ncclunhandledcudaerror", "ncclsystemerror", "ncclinternalerror", "ncclinvalidusage",
       "ncclremoteerror", "nccl error"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        std::string_view msg = c.parsed->message;
        size_t at = c.lower.find("nccl warn");
        std::string detail;
        if (at != std::string_view::npos) {
          // lower is raw lowercased byte for byte, so offsets carry over.
          detail = NormalizeMessage(TrimSpace(c.raw.substr(std::min(at + 9, c.raw.size()))), 80);
        } else {
          detail = NormalizeMessage(TrimSpace(msg), 80);
        }
        const bool timeout = Has(c.lower, "timeout") || Has(c.lower, "timed out");
        const Verdict v = timeout ? Verdict::kTimeout : Verdict::kCrashed;
        return Hit("nccl", v, std::string(Name(v)) + ":nccl:" + detail, Tier::kNccl, false);
      });

  // --- fatal signals written to the log ------------------------------------------------------------
  Add("signal",
      {"segmentation fault", "sigsegv", "bus error", "sigbus", "floating point exception", "sigfpe",
       "illegal instruction", "sigill", "aborted", "sigabrt", "core dumped", "fatal python error",
       // faulthandler's own name for a crash on Windows (Modules/faulthandler.c: "Windows fatal
       // exception: access violation"), the SIGSEGV of that platform.
       "access violation"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        std::string_view msg = TrimSpace(c.parsed->message);
        std::string_view l = c.lower;
        auto signal_hit = [](std::string_view name, Tier tier) {
          return Hit("signal", Verdict::kCrashed, "crashed:signal:" + std::string(name), tier);
        };
        if (Has(l, "segmentation fault") || Has(l, "sigsegv") || Has(l, "windows fatal exception: access violation"))
          return signal_hit("SIGSEGV", Tier::kGeneric);
        if (Has(l, "bus error") || Has(l, "sigbus")) return signal_hit("SIGBUS", Tier::kGeneric);
        if (Has(l, "floating point exception") || Has(l, "sigfpe")) return signal_hit("SIGFPE", Tier::kGeneric);
        if (Has(l, "sigill") || msg.starts_with("Illegal instruction") || Has(l, "illegal instruction (core"))
          return signal_hit("SIGILL", Tier::kGeneric);
        // Abort nearly always follows a printed C++ exception, which says more.
        if (Has(l, "sigabrt") || msg.starts_with("Aborted") || Has(l, "fatal python error: aborted"))
          return signal_hit("SIGABRT", Tier::kSecondary);
        if (Has(l, "fatal python error"))
          return Hit("signal", Verdict::kCrashed, "crashed:fatal_python_error:" + Norm(c, 80), Tier::kGeneric);
        return std::nullopt;
      }, Basis::kStatus);

  // --- deadlines inside the program ---------------------------------------------------------------------
  // A program that gave up waiting says so: a rendezvous, barrier or store that timed out
  // (torch.distributed's "Timed out after N seconds waiting for clients", "Socket Timeout",
  // RendezvousTimeoutError), a status of DEADLINE_EXCEEDED (absl/gRPC, XLA's coordination service),
  // a DataLoader that "timed out after N seconds". Its own words; a specific cause in the same rank
  // (an OOM, an illegal address) still outranks it.
  Add("deadline",
      {"deadline_exceeded", "deadline exceeded", "timed out", "timeouterror", "socket timeout", "wait timeout",
       // The time limits of the systems that run a job, in their documented words: GitHub Actions
       // ("has exceeded the maximum execution time of 360 minutes"), GitLab ("execution took longer
       // than 1h0m0s"), Slurm ("CANCELLED AT ... DUE TO TIME LIMIT"), pytest-timeout ("Failed:
       // Timeout >60.0s", "+++ Timeout +++"), Kubernetes and gRPC (DeadlineExceeded), and the C unit
       // test framework Check's fork mode (check_run.c: "Test timeout expired" for a test killed
       // at CK_DEFAULT_TIMEOUT).
       "maximum execution time", "took longer than", "due to time limit", "timeout >", "+ timeout +", "deadlineexceeded",
       "timeout expired"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && IsAdvisory(c)) return std::nullopt;
        const bool deadline = Has(c.lower, "deadline_exceeded") || Has(c.lower, "deadline exceeded") ||
                              Has(c.lower, "socket timeout") || Has(c.lower, "wait timeout") ||
                              Has(c.lower, "timeouterror") || Has(c.lower, "deadlineexceeded") ||
                              Has(c.lower, "exceeded the maximum execution time") ||
                              Has(c.lower, "execution took longer than") || Has(c.lower, "due to time limit") ||
                              Has(c.lower, "failed: timeout >") || Has(c.lower, "+ timeout +") ||
                              Has(c.lower, "test timeout expired");
        static constexpr std::array<std::string_view, 14> kWaitWords = {
            "rendezvous", "barrier", "store", "waiting", "initializ", "process group", "client", "connect",
            "heartbeat", "worker", "dataloader", "collective", "socket", " after "};
        if (!deadline && !(Has(c.lower, "timed out") && HasAny(c.lower, kWaitWords))) return std::nullopt;
        return Hit("deadline", Verdict::kTimeout, "timeout:deadline", Tier::kGeneric, false);
      });

  // --- a native program that stopped itself, in its runtime's words ------------------------------------
  // glog's and absl's CHECK ("Check failed: cond"), libstdc++'s verbose terminate handler
  // ("terminate called after throwing an instance of 'T'", then "  what():  msg"), Rust's panic
  // ("thread 'main' panicked at src/x.rs:4:5:"), Go's ("panic: runtime error: ..."): an invariant of
  // the program or a library failed. Tier 3 as an uncaught exception is: a fixed fact on the same
  // rank (an OOM or CUDA status inside the what() line matched the rules above) says more.
  Add("native_crash", {"check failed:", "terminate called after throwing", "what():", "panicked at", "panic: "},
      [](const LineContext& c) -> std::optional<RuleHit> {
        if (!c.exc && (c.parsed->level == LogLevel::kInfo || c.parsed->level == LogLevel::kDebug)) return std::nullopt;
        std::string_view msg = TrimSpace(c.parsed->message);
        auto after = [&](std::string_view marker) {
          const size_t at = c.lower.find(marker);
          return at == std::string_view::npos ? std::string_view() : TrimSpace(c.raw.substr(at + marker.size()));
        };
        if (Has(c.lower, "check failed:"))
          return Hit("native_crash", Verdict::kCrashed, "crashed:check_failed:" + NormalizeMessage(after("check failed:"), 80),
                     Tier::kGeneric);
        if (Has(c.lower, "terminate called after throwing")) {
          std::string type = QuotedAfter(c.raw, c.lower, "instance of");
          // Only the throw: its what() line says why (a watchdog's, a CUDA error), and decides.
          return Hit("native_crash", Verdict::kCrashed, "crashed:cpp_exception:" + (type.empty() ? std::string("unknown") : type),
                     Tier::kSecondary);
        }
        if (msg.starts_with("what():"))
          return Hit("native_crash", Verdict::kCrashed, "crashed:cpp_exception:" + NormalizeMessage(after("what():"), 80),
                     Tier::kGeneric);
        if (Has(c.lower, "' panicked at") || msg.starts_with("panic: "))
          return Hit("native_crash", Verdict::kCrashed, "crashed:panic", Tier::kGeneric);
        return std::nullopt;
      });

  // --- an assertion that asked whether the library supports this --------------------------------
  // glibc's assert ("prog: f.cu:582: fn: Assertion `cond' failed.", assert/assert.c) and MSVC's or
  // a library's own ("Assertion failed: cond, file f, line n"): when the condition is the library's
  // support query (cudnn-frontend's graph.check_support(handle), an is_supported(...)), the program
  // stopped because the library said no: a refusal, not a bug. Any other condition is left to the
  // crash it ends in.
  Add("support_assert", {"assertion"}, [](const LineContext& c) -> std::optional<RuleHit> {
    size_t at = c.lower.find("assertion `");
    size_t from = at == std::string_view::npos ? std::string_view::npos : at + 11;
    size_t to = from == std::string_view::npos ? from : c.lower.find("' failed", from);
    if (to == std::string_view::npos) {
      at = c.lower.find("assertion failed:");
      if (at == std::string_view::npos) return std::nullopt;
      from = at + 17;
      to = c.lower.size();
    }
    std::string_view cond = c.lower.substr(from, to - from);
    if (!Has(cond, "check_support") && !Has(cond, "is_supported") && !Has(cond, "issupported") &&
        !Has(cond, "supported("))
      return std::nullopt;
    return Hit("support_assert", Verdict::kUnsupported,
               "unsupported:support_check:" + NormalizeMessage(TrimSpace(c.raw.substr(from, to - from)), 80));
  });

  // --- a sanitizer's report ---------------------------------------------------------------------
  // The program ran under a checker that found a fault: the compiler sanitizers ("==42==ERROR:
  // AddressSanitizer: heap-buffer-overflow", "runtime error:" of UBSan, ThreadSanitizer's "WARNING:
  // ThreadSanitizer: data race") and compute-sanitizer's memcheck ("========= Invalid __global__ read
  // of size 4 bytes", "========= ERROR SUMMARY: 3 errors"). A crash of the program, named by the tool.
  Add("sanitizer",
      {"addresssanitizer:", "threadsanitizer:", "undefinedbehaviorsanitizer", "memorysanitizer:", "invalid __global__",
       "invalid __shared__", "error summary:"},
      [](const LineContext& c) -> std::optional<RuleHit> {
        std::string_view l = c.lower;
        for (std::string_view tool : {"addresssanitizer:", "threadsanitizer:", "memorysanitizer:"})
          if (const size_t at = l.find(tool); at != std::string_view::npos) {
            std::string_view kind = TrimSpace(c.raw.substr(at + tool.size()));
            kind = kind.substr(0, kind.find(' '));
            return Hit("sanitizer", Verdict::kCrashed,
                       "crashed:sanitizer:" + NormalizeMessage(kind.empty() ? tool.substr(0, tool.size() - 1) : kind, 60));
          }
        if (Has(l, "undefinedbehaviorsanitizer")) return Hit("sanitizer", Verdict::kCrashed, "crashed:sanitizer:undefined_behavior");
        if (Has(l, "invalid __global__") || Has(l, "invalid __shared__"))
          return Hit("sanitizer", Verdict::kCrashed, "crashed:sanitizer:invalid_access");
        // compute-sanitizer's summary: "ERROR SUMMARY: 0 errors" is a clean run.
        if (const size_t at = l.find("error summary:"); at != std::string_view::npos && Has(l, "=========")) {
          std::string_view rest = TrimSpace(l.substr(at + 14));
          if (!rest.empty() && rest[0] != '0' && std::isdigit(static_cast<unsigned char>(rest[0])))
            return Hit("sanitizer", Verdict::kCrashed, "crashed:sanitizer:errors", Tier::kGeneric);
        }
        return std::nullopt;
      });

  // The shell's "Killed" for a SIGKILLed child: the OOM killer, unless we killed it ourselves.
  Add("killed", {"killed"}, [](const LineContext& c) -> std::optional<RuleHit> {
    std::string_view msg = TrimSpace(c.parsed->message);
    bool shell = msg == "Killed";
    if (!shell) {
      // "bash: line 1:  4242 Killed   python3 ..." / "/bin/sh: 1: 4242 Killed"
      size_t k = msg.find(" Killed");
      if (k != std::string_view::npos && k > 0) {
        size_t i = k;
        while (i > 0 && msg[i - 1] == ' ') --i;
        shell = i > 0 && std::isdigit(static_cast<unsigned char>(msg[i - 1]));
      }
    }
    if (!shell) return std::nullopt;
    RuleHit h = Hit("killed", Verdict::kOom, "oom:host", Tier::kNccl);
    h.needs_sigkill = true;
    return h;
  });

  // Framework refusals in exception form (NotImplementedError, a ValueError/RuntimeError saying
  // "not supported" / "only supports" / "must be a multiple of", an optional backend's package
  // missing): the decision is refusals.h's, from the exception's type and message. Last among
  // the built-ins, so every fixed fact above (OOM, arch gate, cuDNN, illegal address...) wins.
  Add("refusal", RefusalNeedles(), [](const LineContext& c) -> std::optional<RuleHit> {
    if (!c.exc) return std::nullopt;
    std::optional<std::string> key = RefusalKey(*c.exc);
    if (!key) return std::nullopt;
    return Hit("refusal", Verdict::kUnsupported, std::move(*key));
  }, Basis::kException);

  // pytest's summary "FAILED tests/x.py::test_y - RuntimeError: msg"; the classifier turns the
  // part after " - " into an exception line.
  Add("pytest_failed", {"failed "}, [](const LineContext& c) -> std::optional<RuleHit> {
    std::string_view msg = c.parsed->message;
    if (!msg.starts_with("FAILED ") || msg.find(" - ") == std::string_view::npos) return std::nullopt;
    return Hit("pytest_failed", Verdict::kCrashed, "", Tier::kGeneric, false);
  });
}

}  // namespace gauntlet::classifier
