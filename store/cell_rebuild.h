// The results index of one cell rebuilt from what is stored: when stored verdicts change after the
// fact (a triage label re-judges trials, store/labels.h), the cell's counts, latest and previous
// verdicts, fingerprints and flakiness are read again from its trials' results, in the order they
// finished, through the same UpsertCell every report goes through (store/results_index.h).
#pragma once

#include <cstdint>
#include <string>

#include "store/sqlite.h"

namespace gauntlet::store {

// Deletes the cell (suite `suite` at `version`, `config_key`, `hardware`) and files again every
// result of its trials: each attempt's result in finish order, and the skips that have none. Call
// inside a Store write (it writes on `db`); throws sql::Error.
void RebuildCell(sql::Db& db, const std::string& suite, int64_t version, const std::string& config_key,
                 const std::string& hardware);

}  // namespace gauntlet::store
