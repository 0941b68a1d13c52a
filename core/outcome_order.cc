#include "core/outcome_order.h"

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
