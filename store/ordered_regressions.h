// Regressions along an ordered parameter (versions, tags, commits): over the stored results (the
// cells, so across sweeps), a config that passed at one value and failed at the next value tested on
// the same hardware class, with the bisection that searches that gap, or how to start one. The
// regressions endpoint lists them; auto_bisect starts the bisections (daemon/auto_bisect.cc).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bisect.h"
#include "core/bisect_request.h"
#include "core/status.h"
#include "store/store.h"

namespace gauntlet::store {

// One end of an ordered regression: one cell's latest verdict at one value of the parameter.
struct RegressionEnd {
  std::string value;  // the parameter's value there
  Verdict verdict = Verdict::kPassed;
  std::string signature, config_key;
  int64_t trial = 0, sweep = 0;  // the trial that judged it and its sweep (0: none stored)
};

// The latest bisection of a regression's suite version, config, hardware and parameter whose
// good..bad range holds both of its values.
struct CoveringBisection {
  int64_t id = 0;    // its sweep
  Bisection search;  // its stored state (core/bisect.h)
};

// What starts the bisection of a gap: the POST /api/v1/bisect body and the same as a command line.
struct BisectStart {
  BisectRequest request;
  std::string command;  // the `gauntlet bisect` line, each word quoted for a POSIX shell
};

// A config that passed at one value of an ordered parameter and failed at the next value tested on
// the same hardware class.
struct OrderedRegression {
  std::string suite;
  int suite_version = 0, latest_version = 0;  // the cells' suite version, and the suite's latest
  std::string parameter, hardware;
  nlohmann::json config = nlohmann::json::object();  // the other parameters -> their values
  std::string config_key;                            // the bad side's
  RegressionEnd before, after;                       // the good and the bad value
  int untested = 0;                                  // declared values between them
  std::optional<std::string> first_bad;              // the bad value when none lies between
  int64_t at = 0;                                    // the later of the two verdicts, ms
  std::optional<CoveringBisection> bisection;
  // Offered when values are untested, no bisection covers them and the cells are of the latest
  // suite version (and the hardware can be named as a target).
  std::optional<BisectStart> start;
  std::string detail;  // one line for a person: what happened and what to do next
};

// The ordered-parameter regressions of `suite` (every suite when unset), newest first. A point is
// one cell's latest verdict: passed is good, another verdict that counts as a run
// (core/pass_rate.h) is bad; flaky cells and verdicts that say nothing about the config are left
// out. Reads only; thread-safe. Internal on a store error. `budget` (may be null: unbounded)
// bounds the cells read and the time (its Answer when it ends the query).
Result<std::vector<OrderedRegression>> OrderedRegressions(Store& store, const std::optional<std::string>& suite,
                                                          QueryBudget* budget = nullptr);

// `r` as the regressions endpoint and the regression.found webhook write it: {"kind": "ordered",
// "suite", "suite_version", "latest_version", "parameter", "hardware", "config", "config_key",
// "before"/"after" ({"value", "verdict", "signature", "trial", "sweep", "config_key"}), "untested",
// "first_bad" (or null), "at", "bisection" (null, or {"id", "state", "good", "bad", "first_bad",
// "interval", "trials"}), "start" (null, or {"request", "command"}), "detail"}. Pure.
nlohmann::json OrderedRegressionJson(const OrderedRegression& r);

}  // namespace gauntlet::store
