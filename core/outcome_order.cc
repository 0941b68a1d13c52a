#include "core/outcome_order.h"

#include <algorithm>

namespace gauntlet {

OutcomeOrder ReadOutcomeOrder(const std::vector<Verdict>& verdicts) {
  std::vector<bool> passed;
  for (Verdict v : verdicts)
    if (Info(v).judged) passed.push_back(v == Verdict::kPassed);
  const size_t from = passed.size() > static_cast<size_t>(kOrderWindow) ? passed.size() - kOrderWindow : 0;
  int changes = 0;
  for (size_t i = from + 1; i < passed.size(); ++i) changes += passed[i] != passed[i - 1];
  if (changes == 0) return OutcomeOrder::kStable;
  return changes == 1 ? OutcomeOrder::kChanged : OutcomeOrder::kInterleaved;
}

}  // namespace gauntlet

namespace gauntlet {

void KeepLatestRuns(std::vector<OrderedRun>* runs) {
  std::stable_sort(runs->begin(), runs->end(), [](const OrderedRun& a, const OrderedRun& b) { return a.at < b.at; });
  if (runs->size() > static_cast<size_t>(kOrderWindow))
    runs->erase(runs->begin(), runs->end() - kOrderWindow);
}

bool RunsAreFlaky(std::vector<OrderedRun> runs) {
  KeepLatestRuns(&runs);
  int changes = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].flaky) return true;
    if (i > 0) changes += runs[i].passed != runs[i - 1].passed;
    for (size_t j = 0; j < i; ++j)
      if (runs[j].batch == runs[i].batch && runs[j].passed != runs[i].passed) return true;
  }
  return changes >= 2;
}

}  // namespace gauntlet
