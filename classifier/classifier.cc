// Streaming classification: split into lines, prefilter each line with one Aho-Corasick pass,
// run rules and traceback tracking only on candidate lines, keep per-rank summaries (bounded),
// and decide at Finish. Decision order and rationale: docs/CLASSIFIER.md.
#include "classifier/classifier.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

#include "core/user_regex.h"
#include "core/verdict.h"
#include "classifier/builtin_rules.h"
#include "classifier/engine.h"
#include "classifier/exception_judge.h"
#include "classifier/log_line.h"
#include "classifier/normalize.h"
#include "classifier/rank_triage.h"
#include "core/signal_names.h"
#include "classifier/traceback.h"
#include "classifier/pytest_report.h"
#include "classifier/test_judge.h"
#include "classifier/runner_set.h"

#include "classifier/classifier_state.h"

namespace gauntlet::classifier {

RankState& Classifier::State::Rank(const std::string& key) {
  auto it = ranks.find(key);
  if (it != ranks.end()) return it->second;
  const std::string& k = ranks.size() >= kMaxRanks ? std::string("~other") : key;
  RankState& rs = ranks[k];
  rs.key = k;
  return rs;
}

// torch.multiprocessing's parent: "ProcessExitedException: process 1 terminated with signal SIGSEGV".
// A crash signal is that rank's own failure; an exit code or SIGABRT/SIGKILL only says it ended,
// so it counts only for a rank that left no other trace (its watchdog abort stays the story).
void Classifier::State::SpawnExitIncident(const SpawnExit& e, std::string_view line) {
  RankState& rs = Rank("rank" + std::to_string(e.process));
  if (launcher_rank.empty()) launcher_rank = rs.key;
  const std::string how =
      e.signal ? "crashed:signal:" + SignalName(*e.signal) : "crashed:exit_code:" + std::to_string(*e.exit_code);
  Incident inc{Verdict::kCrashed, how, TrimEvidence(line), true, true};
  inc.basis = e.signal ? Basis::kStatus : Basis::kExitStatus;
  if (e.signal && IsCrashSignal(*e.signal)) return Record(rs, Tier::kGeneric, std::move(inc));
  for (uint64_t f : rs.first)
    if (f != kNever) return;
  Record(rs, Tier::kSecondary, std::move(inc));
}

void Classifier::State::Record(RankState& rs, Tier tier, Incident inc) {
  const int t = static_cast<int>(tier);
  rs.first[t] = std::min(rs.first[t], line_no);
  inc.rank = rs.key;
  if (inc.signature == "timeout:nccl_watchdog") rs.watchdog = true;
  // Otherwise the last one wins (the final exception of a chain ended the process), except that
  // a second fixed-key fact of the same kind is a consequence of the first, and the lines that
  // continue an exception's message ("Mismatched elements: ...") do not replace the exception.
  // Among one run's test outcomes the worst stands: a refusal never hides a real failure of
  // another test, whatever order the runner printed them in.
  if (rs.last[t] && inc.test && rs.last[t]->test) {
    const bool kept_refusal = rs.last[t]->verdict == Verdict::kUnsupported;
    if (!kept_refusal && inc.verdict == Verdict::kUnsupported) return;
    if (kept_refusal != (inc.verdict == Verdict::kUnsupported)) {
      rs.last[t] = std::move(inc);
      return;
    }
  }
  if (tier == Tier::kSpecific && rs.last[t]) {
    const Incident& kept = *rs.last[t];
    const int before = CausePriority(kept.verdict), now = CausePriority(inc.verdict);
    if (before > now || (before == now && (kept.keyed || (kept.exception && !inc.exception)))) return;
  }
  rs.last[t] = std::move(inc);
}

void Classifier::State::ProcessLine(std::string_view line) {
  ++line_no;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (const int r = TorchrunRankPrefix(line); r >= 0 && static_cast<size_t>(r) < kMaxRanks) {
    if (seen_ranks.size() <= static_cast<size_t>(r)) seen_ranks.resize(static_cast<size_t>(r) + 1, 0);
    seen_ranks[static_cast<size_t>(r)] = 1;
  }
  if (root.active()) {
    root.Observe(line);
    if (root.rank() >= 0) launcher_rank = "rank" + std::to_string(root.rank());
  }
  if (std::string_view t = TrimSpace(line); !t.empty()) {
    last_line_view = t;
    last_line_pending = true;
  }
  const Engine& e = *engine;
  // A test runner's needle only shows the line to that runner; the rules' needles make it a candidate.
  const uint32_t rb = e.runner_base, re = rb + static_cast<uint32_t>(e.runner_of.size());
  bool any = false;
  e.ac->Scan(line, [this, rb, re, &e, &any](uint32_t id) {
    if (id >= rb && id < re) {
      runners.Hit(e.runner_of[id - rb]);
      return;
    }
    any = true;
    if (!hit[id]) {
      hit[id] = 1;
      touched.push_back(id);
    }
  });
  runners.Observe(line);
  if (any || open_tracebacks > 0 || e.any_every_line) SlowPath(line, any);
  if (!redirect_rank.empty()) {
    // The reprinted traceback ends when that rank's tracker closes again.
    // A marker followed by no traceback ("-- Process 1 terminated ...:" then "...") gives up soon.
    const bool open = Rank(redirect_rank).tb.open();
    if (open) redirect_opened = true;
    else if (redirect_opened || ++redirect_wait > 8) redirect_rank.clear();
  }
  for (uint32_t id : touched) hit[id] = 0;
  touched.clear();
}

void Classifier::State::SlowPath(std::string_view line, bool any_needle) {
  LogLine parsed = ParseLogLine(line);
  std::string rank = parsed.rank;
  // torchrun reprints an error file's traceback two spaces in; as written, its exception line
  // would read as an indented body line.
  if (root.reprinting() && rank.empty() && parsed.message.starts_with("  ")) parsed.message.remove_prefix(2);
  // A launcher's reprint of a rank's traceback (torch.multiprocessing's parent after "-- Process N
  // terminated ...", torchrun's root-cause block) belongs to that rank.
  if (rank.empty() && root.reprinting() && root.rank() >= 0) rank = "rank" + std::to_string(root.rank());
  if (rank.empty() && !redirect_rank.empty()) rank = redirect_rank;
  if (hit[engine->root_cause_needle]) root.Start();
  if (hit[engine->spawn_needle]) {
    if (const int p = SpawnFailedProcess(parsed.message); p >= 0) {
      redirect_rank = "rank" + std::to_string(p);
      redirect_opened = false;
      redirect_wait = 0;
      if (launcher_rank.empty()) launcher_rank = redirect_rank;
    }
  }
  // Unprefixed continuation lines belong to the traceback that a prefixed line opened (SGLang
  // logs "[.. TP0] Scheduler hit an exception: Traceback ..." and the frames without prefix).
  if (rank.empty() && !last_opener_rank.empty()) {
    auto it = ranks.find(last_opener_rank);
    if (it != ranks.end() && it->second.tb.open()) rank = last_opener_rank;
  }
  RankState& rs = Rank(rank);
  const bool was_open = rs.tb.open();
  const auto role =
      (any_needle || was_open) ? rs.tb.Observe(parsed.message, parsed.level) : TracebackTracker::Role::kNone;
  open_tracebacks += static_cast<int>(rs.tb.open()) - static_cast<int>(was_open);
  if (role == TracebackTracker::Role::kOpener) last_opener_rank = rank;

  const bool benign = RunSuiteRules(line, parsed, rs.key);
  if (benign || role == TracebackTracker::Role::kFrame || role == TracebackTracker::Role::kBody) return;

  if (role == TracebackTracker::Role::kException) {
    ExceptionIncident(rs, line, parsed);
    return;
  }
  if (!any_needle) return;
  if (IsPassOrSkipOutcomeLine(parsed.message)) return;
  std::string_view raw = line.substr(0, kMaxRuleScan);
  // Lowercased into a buffer that keeps its capacity: no allocation per candidate line.
  lower_buf.assign(raw);
  for (char& ch : lower_buf)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + ('a' - 'A'));
  LineContext ctx{raw, lower_buf, &parsed, nullptr};
  std::optional<RuleHit> h = engine->builtin->Match(touched, ctx);
  if (!h) return;
  if (h->needs_sigkill) {
    if (!killed_line)
      killed_line = Incident{h->verdict, h->key, TrimEvidence(line), false, false, rs.key, false, h->basis};
    return;
  }
  Incident inc;
  Tier tier = h->tier;
  if (h->rule == "pytest_failed") {
    // One test's exception, judged as any exception is, and a test outcome (the worst of them stands).
    std::optional<Judgement> pj = JudgePytestFailedLine(*engine, parsed);
    if (!pj) return;
    const Judgement& j = *pj;
    inc = {j.verdict, j.signature, TrimEvidence(line), j.keyed, true};
    inc.basis = j.basis;
    inc.test = true;
    tier = Tier::kGeneric;
  } else {
    inc = {h->verdict, h->key, TrimEvidence(line), h->keyed};
    inc.basis = h->basis;
  }
  inc.rank = rs.key;
  if (h->strong && !first_strong) first_strong = inc;
  Record(rs, tier, std::move(inc));
}

// Suite rules see every line, frames included; returns whether a `passed` rule marked it benign.
bool Classifier::State::RunSuiteRules(std::string_view line, const LogLine& parsed, const std::string& rank) {
  bool benign = false;
  for (size_t i = 0; i < engine->suite.size(); ++i) {
    const CompiledRule& r = engine->suite[i];
    if (!r.every_line && !hit[r.needle]) continue;
    if (suite_hits[i] && r.rule.verdict != Verdict::kPassed) continue;
    bool m;
    if (r.re) {
      // RE2 (core/user_regex.h): linear in the line, so a 64 KiB line is searched whole.
      m = r.re->Search(line) || r.re->Search(parsed.message);
    } else {
      m = line.find(r.rule.match) != std::string_view::npos;
    }
    if (!m) continue;
    if (r.rule.verdict == Verdict::kPassed) {
      benign = true;
      continue;
    }
    suite_hits[i] = Incident{r.rule.verdict, r.signature, TrimEvidence(line), false, false, rank, false, Basis::kSuiteRule};
  }
  return benign;
}

// A line that completed an exception (its own "Type: msg", or the cause / message that followed
// an open-ended one). Rules read "Type: message" when the text came from two lines, so their
// needles are found again in that text; the evidence is always the physical line.
void Classifier::State::ExceptionIncident(RankState& rs, std::string_view line, const LogLine& parsed) {
  const ExceptionLine& exc = rs.tb.exception();
  if (exc.type == "ProcessExitedException") {
    if (std::optional<SpawnExit> se = ParseSpawnExit(exc.message)) return SpawnExitIncident(*se, line);
  }
  const std::string synthetic = rs.tb.exception_continued() ? exc.type + ": " + exc.message : std::string();
  Judgement j = JudgeException(*engine, exc, synthetic.empty() ? parsed.message : std::string_view(synthetic),
                               parsed, rs.tb.innermost_file(), rs.tb.innermost_in_library());
  Incident inc{j.verdict, j.signature, TrimEvidence(line), j.keyed, true};
  inc.basis = j.basis;
  Tier tier = j.tier;
  // pytest's "E" lines report one test's exception: a test outcome, weighed with the others.
  if (parsed.test_report) {
    inc.test = true;
    tier = std::min(tier, Tier::kGeneric);
  }
  inc.rank = rs.key;
  if (j.strong && !first_strong) first_strong = inc;
  Record(rs, tier, std::move(inc));
}

std::optional<TestReport> Classifier::State::Tests(bool complete_only) const {
  // One log holds one runner's report (a suite runs one runner per stage), or a runner's inside
  // another's; a run cut short is read from the report with the most cases so far.
  if (std::optional<TestReport> done = runners.Complete()) return done;
  return complete_only ? std::nullopt : runners.Longest();
}

std::optional<TestReport> Classifier::Tests() const {
  if (state_->partial.empty()) return state_->Tests(false);
  State copy = *state_;
  copy.ProcessLine(copy.partial);
  return copy.Tests(false);
}

Classifier::Classifier(std::vector<SignatureRule> suite_rules) : state_(std::make_unique<State>()) {
  state_->rules = suite_rules;
  state_->engine = SharedEngine(std::move(suite_rules));
  state_->hit.assign(state_->engine->ac->needle_count(), 0);
  state_->suite_hits.resize(state_->engine->suite.size());
}
Classifier::~Classifier() = default;
Classifier::Classifier(Classifier&&) noexcept = default;
Classifier& Classifier::operator=(Classifier&&) noexcept = default;

void Classifier::Feed(std::string_view chunk) {
  State& s = *state_;
  while (!chunk.empty()) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    if (!nl) {
      // No line end yet: keep (at most kMaxLine bytes of) the partial line.
      if (!s.partial_overflow) {
        size_t room = kMaxLine - s.partial.size();
        s.partial.append(chunk.substr(0, room));
        if (chunk.size() > room) s.partial_overflow = true;
      }
      s.CommitLastLine();
      return;
    }
    size_t len = static_cast<const char*>(nl) - chunk.data();
    std::string_view piece = chunk.substr(0, len);
    if (s.partial.empty() && !s.partial_overflow) {
      s.ProcessLine(piece.substr(0, kMaxLine));  // zero-copy common case
    } else {
      if (!s.partial_overflow) s.partial.append(piece.substr(0, kMaxLine - s.partial.size()));
      s.ProcessLine(s.partial);
      s.CommitLastLine();  // the view points into partial, about to be cleared
      s.partial.clear();
      s.partial_overflow = false;
    }
    chunk.remove_prefix(len + 1);
  }
  s.CommitLastLine();
}

Classification Classifier::Finish(const ExitInfo& exit) const {
  if (state_->partial.empty()) return state_->Decide(exit);
  State copy = *state_;  // Finish is const: the unterminated last line is processed on a copy
  copy.ProcessLine(copy.partial);
  copy.CommitLastLine();
  return copy.Decide(exit);
}

}  // namespace gauntlet::classifier
