#include "classifier/runner_set.h"

namespace gauntlet::classifier {

RunnerSet::RunnerSet() { readers_.resize(TestRunners().size()); }

RunnerSet::RunnerSet(const RunnerSet& o) : hit_(o.hit_), active_(o.active_) {
  for (const auto& r : o.readers_) readers_.push_back(r ? r->Clone() : nullptr);
}

RunnerSet& RunnerSet::operator=(const RunnerSet& o) {
  if (this != &o) *this = RunnerSet(o);
  return *this;
}

void RunnerSet::Observe(std::string_view line) {
  for (uint32_t due = hit_ | active_; due != 0; due &= due - 1) {
    const int i = __builtin_ctz(due);
    std::unique_ptr<TestRunnerReader>& r = readers_[static_cast<size_t>(i)];
    if (!r) r = TestRunners()[static_cast<size_t>(i)].make();
    r->Observe(line);
    active_ = (active_ & ~(1u << i)) | ((r->active() ? 1u : 0u) << i);
  }
  hit_ = 0;
}

std::optional<TestReport> RunnerSet::Complete() const {
  for (const auto& r : readers_)
    if (r && r->complete()) return r->Report();
  return std::nullopt;
}

std::optional<TestReport> RunnerSet::Longest() const {
  std::optional<TestReport> best;
  for (const auto& r : readers_) {
    if (!r) continue;
    TestReport t = r->Report();
    if (!t.cases.empty() && (!best || t.cases.size() > best->cases.size())) best = std::move(t);
  }
  return best;
}

}  // namespace gauntlet::classifier
