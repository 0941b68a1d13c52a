// The classifier's decision at Finish (docs/CLASSIFIER.md "Decision order"): which rank's incident,
// of which tier, explains the run, given how the process ended.
#include "classifier/classifier_state.h"
#include "classifier/test_judge.h"
#include "core/signal_names.h"

namespace gauntlet::classifier {

// The rank whose first incident in tiers [lo, hi] came earliest decides; it reports its strongest
// tier, and within that tier the incident Record kept (see there).
std::optional<Incident> Classifier::State::Pick(int lo, int hi) const {
  const RankState* best = nullptr;
  uint64_t earliest = kNever;
  for (const auto& [key, rs] : ranks) {
    uint64_t f = kNever;
    for (int t = lo; t <= hi; ++t) f = std::min(f, rs.first[t]);
    if (f < earliest) {
      earliest = f;
      best = &rs;
    }
  }
  if (!best) return std::nullopt;
  for (int t = hi; t >= lo; --t)
    if (best->last[t]) return best->last[t];
  return std::nullopt;
}

// The deciding incident as a result. When no rank printed an error of its own (`consequence`: the
// decision came from tier 1-2) and the deciding rank's NCCL watchdog timed out while another
// torchrun-prefixed rank reported no timeout, that other rank hung: it never reached the
// collective its peers waited in, and their timeout is the consequence, not the failure.
Classification Classifier::State::Attribute(const Incident& i, bool consequence) const {
  Classification c{i.verdict, i.signature, i.evidence, i.rank, i.basis};
  if (!consequence || !i.rank.starts_with("rank")) return c;
  if (auto self = ranks.find(i.rank); self == ranks.end() || !self->second.watchdog) return c;
  for (size_t r = 0; r < seen_ranks.size(); ++r) {
    if (!seen_ranks[r]) continue;
    const std::string key = "rank" + std::to_string(r);
    auto it = ranks.find(key);
    if (it != ranks.end() && it->second.watchdog) continue;
    c.verdict = Verdict::kTimeout;
    c.signature = "timeout:rank_hang";
    c.rank = key;
    c.evidence = TrimEvidence(key + " never joined the collective that timed out on " + i.rank + ": " + i.evidence);
    return c;
  }
  return c;
}

Classification Classifier::State::Decide(const ExitInfo& exit) const {
  Classification c = DecideInner(exit);
  // A failure no rank's own line explained still names the rank its launcher reported.
  if (c.rank.empty() && c.verdict != Verdict::kPassed && c.verdict != Verdict::kCancelled) c.rank = launcher_rank;
  return c;
}

Classification Classifier::State::DecideInner(const ExitInfo& exit) const {
  auto out = [this](const Incident& i) { return Attribute(i, false); };
  auto after = [this](const Incident& i) { return Attribute(i, true); };
  const std::string last = TrimEvidence(last_line);
  if (exit.cancelled) return {Verdict::kCancelled, "cancelled:by_user", last, "", Basis::kWorker};
  // The suite's own rules win; among several, the first in the suite's order.
  for (size_t i = 0; i < suite_hits.size(); ++i)
    if (suite_hits[i]) return out(*suite_hits[i]);
  // A test runner that finished its report judged every case: the worst case is the run's verdict
  // (a skip is unsupported even when pytest exits 0). When every case passed the log still decides.
  if (!exit.timed_out && TestJudgementDepth() < kMaxJudgeDepth) {
    if (std::optional<TestReport> t = Tests(true)) {
      const TestJudgement tests = JudgeTests(*t, rules);
      Classification j = tests.overall;
      j.basis = Basis::kRunner;
      if (j.verdict != Verdict::kPassed) {
        // The runner says a test failed but not why (CTest's bare ***Failed, a FAIL result line):
        // a cause the log names elsewhere (a refusal, the node's fault, memory, a deadline, a
        // failed check) explains it. A crash elsewhere does not undo a result line's failed
        // reference check, and a line that says what the runner said (the result line itself)
        // adds nothing: the runner's report stays the basis.
        if (tests.overall_said_nothing)
          if (auto why = Pick(static_cast<int>(Tier::kGeneric), static_cast<int>(Tier::kSpecific));
              why && why->verdict != Verdict::kPassed && why->verdict != Verdict::kCrashed && why->verdict != j.verdict)
            return out(*why);
        return j;
      }
    }
  }

  const bool exited_ok = exit.exit_code && *exit.exit_code == 0 && !exit.signal && !exit.timed_out;
  if (exited_ok) {
    // Exit 0 is believed unless the log holds a refusal or device fault that no program survives
    // correctly (e.g. a CUTLASS example that prints "requires compute capability 100" and returns 0).
    if (first_strong) return out(*first_strong);
    return {Verdict::kPassed, "", ""};
  }
  if (auto p = Pick(static_cast<int>(Tier::kGeneric), static_cast<int>(Tier::kSpecific))) return out(*p);
  // torchrun's root cause died of a crash signal and no rank printed an error of its own.
  if (root.rank() >= 0 && root.exitcode() && *root.exitcode() < 0 && IsCrashSignal(-*root.exitcode()))
    return {Verdict::kCrashed, "crashed:signal:" + SignalName(-*root.exitcode()), root.evidence(), launcher_rank,
            Basis::kStatus};

  if (exit.timed_out) {
    for (auto [lo, hi] : {std::pair{2, 2}, std::pair{1, 1}}) {
      if (auto s = Pick(lo, hi); s && s->verdict == Verdict::kTimeout) return after(*s);
    }
    return {Verdict::kTimeout, "timeout:stage_limit", last, "", Basis::kWorker};
  }
  std::optional<int> sig = exit.signal;
  if (!sig && exit.exit_code && *exit.exit_code > 128 && *exit.exit_code < 160) sig = *exit.exit_code - 128;
  // A crash signal is a value of the signals' vocabulary that says what happened; any other signal
  // or exit code says only that the process failed.
  if (sig && IsCrashSignal(*sig)) return {Verdict::kCrashed, "crashed:signal:" + SignalName(*sig), last, "", Basis::kStatus};
  if (sig && *sig == 9 && killed_line) return out(*killed_line);
  // NCCL WARN lines also show up in healthy runs ("Failed to open libibverbs.so"): they only
  // explain a failure we know happened, never decide one on their own.
  const bool known_failure = sig || (exit.exit_code && *exit.exit_code != 0);
  if (known_failure) {
    if (auto n = Pick(static_cast<int>(Tier::kNccl), static_cast<int>(Tier::kNccl))) return out(*n);
  }
  if (auto s = Pick(static_cast<int>(Tier::kSecondary), static_cast<int>(Tier::kSecondary))) return after(*s);
  // A runner's report cut short that already named a failed case says more than the exit status.
  if (known_failure && TestJudgementDepth() < kMaxJudgeDepth)
    if (std::optional<TestReport> t = Tests(false))
      if (std::optional<Classification> j = JudgeFailedCases(*t, rules)) return *j;
  if (sig) return {Verdict::kCrashed, "crashed:signal:" + SignalName(*sig), last};
  if (exit.exit_code && *exit.exit_code != 0)
    return {Verdict::kCrashed, "crashed:exit_code:" + std::to_string(*exit.exit_code), last};
  return {Verdict::kPassed, "", ""};
}

}  // namespace gauntlet::classifier
