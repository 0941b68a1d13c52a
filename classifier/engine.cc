#include "classifier/engine.h"

#include <map>
#include <mutex>

#include "classifier/normalize.h"
#include "classifier/regex_literal.h"
#include "classifier/test_runner.h"

namespace gauntlet::classifier {

namespace {
constexpr std::string_view kTracebackNeedle = "traceback (most recent call last)";
constexpr std::string_view kSpawnNeedle = "terminated with the following error";
constexpr std::string_view kRootCauseNeedle = "root cause (first observed failure)";

std::shared_ptr<const Engine> BuildEngine(std::vector<SignatureRule> suite_rules) {
  auto engine = std::make_shared<Engine>();
  std::vector<std::string> needles = engine->builtin->needles();
  engine->builtin_count = static_cast<uint32_t>(needles.size());
  engine->traceback_needle = static_cast<uint32_t>(needles.size());
  needles.emplace_back(kTracebackNeedle);
  engine->spawn_needle = static_cast<uint32_t>(needles.size());
  needles.emplace_back(kSpawnNeedle);
  engine->root_cause_needle = static_cast<uint32_t>(needles.size());
  needles.emplace_back(kRootCauseNeedle);
  engine->runner_base = static_cast<uint32_t>(needles.size());
  const std::vector<TestRunnerEntry>& runners = TestRunners();
  for (size_t i = 0; i < runners.size(); ++i)
    for (const std::string& n : runners[i].needles) {
      needles.push_back(n);
      engine->runner_of.push_back(static_cast<uint32_t>(i));
    }
  for (auto& r : suite_rules) {
    CompiledRule c;
    c.signature = r.signature.empty() ? SanitizeUtf8(std::string(Name(r.verdict)) + ":" + r.match.substr(0, 120)) : r.signature;
    std::string literal = r.match;
    if (r.regex) {
      // Rules come through ParseSignatureRules, which compiled them; one that does not compile
      // (a definition that bypassed it) matches nothing rather than stopping the worker.
      auto re = UserRegex::Compile(r.match);
      if (!re.ok()) continue;
      c.re.emplace(std::move(*re));
      literal = RequiredLiteral(r.match);
      if (literal.size() < 3) {
        c.every_line = true;
        engine->any_every_line = true;
      }
    }
    if (!c.every_line) {
      c.needle = static_cast<uint32_t>(needles.size());
      needles.push_back(literal);
    }
    c.rule = std::move(r);
    engine->suite.push_back(std::move(c));
  }
  engine->ac.emplace(needles);
  return engine;
}

}  // namespace

// Building an engine (the automaton over every built-in needle, the suite's regexes) costs far
// more than classifying a short stage's log, and a worker running thousands of short trials built
// one per stage (a fifth of its CPU time). Engines are immutable, so one per distinct rule set is
// shared by every Classifier in the process.
std::shared_ptr<const Engine> SharedEngine(std::vector<SignatureRule> suite_rules) {
  std::string key;
  for (auto& r : suite_rules) {
    key.append(r.match).push_back('\0');
    key.append(r.regex ? "1" : "0").append(Name(r.verdict)).push_back('\0');
    key.append(r.signature).push_back('\1');
  }
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Engine>> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 32) cache.clear();  // bounded; engines in use live on in their classifiers
  auto engine = BuildEngine(std::move(suite_rules));
  cache.emplace(std::move(key), engine);
  return engine;
}

}  // namespace gauntlet::classifier
