// GET /api/v1/matrix's words: each failed cell's `reason` (core/matrix_cells.h CellReason, with the
// suite's stage names), and `?format=markdown`, the table `gauntlet matrix --format markdown` prints
// (it asks for this, so there is one Markdown), with the hardware beyond its class and the software
// fingerprint it was judged under, ready to paste into an issue.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "store/store.h"

namespace gauntlet::api {

// Sets `reason` on each failed or skipped cell of matrix answer *m (null on the others), naming
// timeouts after `suite`'s stages (its definition's "stages"). Pure.
void AddCellReasons(const nlohmann::json& suite, nlohmann::json* m);

// The nodes on record that ran results of each hardware class (store's ResultNodes, resolved).
using NodesByClass = std::map<std::string, std::vector<store::NodeRow>>;

// Matrix answer `m` (with reasons) as Markdown: a title line ("**suite** v1 · sweep 3 · metric x"),
// a "Hardware" list (per class its GPU model's memory, driver and CUDA versions and the nodes of
// `nodes` that ran it), the software fingerprint(s), the grid (row keys in backticks, cells as
// core/matrix_cells.h writes them, never cut) and the mixed and flaky cells' lines. Pure.
std::string MatrixMarkdown(const nlohmann::json& m, const NodesByClass& nodes);

}  // namespace gauntlet::api
