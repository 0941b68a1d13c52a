// A config's judged runs on one hardware class in finish order, read for the broke-versus-flaky rule
// (core/outcome_order.h, docs/SCHEDULING.md "Broke or flaky"). Used by compare and regressions, so
// `gauntlet diff`, the regressions list and regression.found agree. Call on the Store's reader or
// writer connection; throws sql::Error.
#pragma once

#include <cstdint>
#include <string>

#include "store/sqlite.h"

namespace gauntlet::store {

// True when the failure of the config `config_key` of suite version `suite_id` on `hardware` did
// not stay: its latest kOrderWindow judged runs, whatever the fingerprint, passed and failed in turn,
// or the latest of them passed. False when it passed and then failed every run since (it broke), or
// when it has no judged run.
bool FailureDidNotStay(sql::Db& db, int64_t suite_id, const std::string& config_key, const std::string& hardware);

// The same for a suite named `suite` at `version`.
bool FailureDidNotStay(sql::Db& db, const std::string& suite, int64_t version, const std::string& config_key,
                       const std::string& hardware);

}  // namespace gauntlet::store
