// The triage loop (docs/CLASSIFIER.md "Triage"): failures no tool explained, grouped by what they
// printed last, and the labels people give them. A label is a rule (a signature, a text its
// evidence holds, a verdict, a scope of one suite or all) that re-judges every stored trial it
// matches, keeps each trial's previous verdict in an audit trail, and can be withdrawn, restoring
// them. Every function here is thread-safe (the Store serialises writes); Internal on a store error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/verdict.h"
#include "store/store.h"

namespace gauntlet::store {

// One group of unclassified failures: trials whose latest result has this signature and evidence
// (the line the classifier would have used), across suites.
struct TriageItem {
  std::string signature, evidence;
  int64_t trials = 0;
  int64_t example_trial = 0;       // the latest of them
  std::vector<std::string> suites;  // at most 8, by name
};

// The unclassified groups (a failure judged from the exit status alone: docs/CLASSIFIER.md "Basis")
// of `suite` (every suite when unset), the most trials first, at most `limit` (1..500).
Result<std::vector<TriageItem>> Triage(Store& store, const std::optional<std::string>& suite, int limit);

struct Label {
  int64_t id = 0;
  std::string signature;                 // the signature it labels (exact)
  std::string match;                     // a text the trial's evidence must hold ("": any)
  std::optional<std::string> suite;      // unset: every suite
  Verdict verdict = Verdict::kCrashed;   // one a signature rule may assign
  std::string new_signature;             // the trials' new signature ("<verdict>:label:<id>" when empty)
  std::string note, created_by;
  int64_t created_at = 0;
  std::optional<int64_t> withdrawn_at;
  std::string withdrawn_by;
  int64_t rejudged = 0;  // trials this label re-judged (or, once withdrawn, restored)
};

// Stores `l` (id, created_at and new_signature filled in), re-judges every done trial whose latest
// result carries l.signature and whose evidence holds l.match (in l.suite, or any), records each
// trial's previous verdict and signature in the audit trail, and refreshes the results index of
// every cell it touched. Invalid naming the field for a signature or verdict that cannot be labelled.
Result<Label> AddLabel(Store& store, Label l);

// Withdraws label `id` (by `by`): every trial it re-judged that still carries its verdict goes back
// to the verdict it had, recorded in the audit trail too. NotFound for no such label; Invalid
// ("id") for one already withdrawn.
Result<Label> WithdrawLabel(Store& store, int64_t id, const std::string& by);

// Every label, newest first.
Result<std::vector<Label>> ListLabels(Store& store);

// One entry of a trial's audit trail: a label changed its verdict from `from` to `to`.
struct VerdictChange {
  int64_t label = 0;
  std::string from_verdict, from_signature, to_verdict, to_signature, by;
  int64_t at = 0;
};
// The changes labels made to trial `trial`, oldest first.
Result<std::vector<VerdictChange>> TrialAudit(Store& store, int64_t trial);

// A label's change that webhooks were not told of yet (verdicts.relabelled): its labelling, or its
// withdrawal, with the trials it re-judged then.
struct LabelNews {
  Label label;
  bool withdrawn = false;       // the withdrawal (else the labelling)
  std::vector<int64_t> trials;  // the trials it re-judged then, the first kNewsTrials by id
  static constexpr int kNewsTrials = 50;
};
// Label changes not announced yet, the oldest label first, at most `limit`. A label labelled and
// withdrawn before either was announced gives its labelling first (its withdrawal the next call).
Result<std::vector<LabelNews>> UnannouncedLabelNews(Store& store, int limit = 20);

// The labels in force (not withdrawn), oldest first: the daemon applies them to every new result
// as it is stored (LabelMatches), so a trial reported after a label is judged as the stored ones were.
Result<std::vector<Label>> ActiveLabels(Store& store);

// True when `l` labels a result of suite `suite` with this signature and evidence: the same
// signature, l.match in the evidence, and the suite in its scope. Pure.
bool LabelMatches(const Label& l, const std::string& suite, const std::string& signature, const std::string& evidence);

// The signature a label gives: l.new_signature, else "<verdict>:label:<id>". Pure.
std::string LabelSignature(const Label& l);

}  // namespace gauntlet::store
