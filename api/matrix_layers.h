// The judged answers' shared pieces: a suite's stored declaration as the version asked about reads
// it, and the matrix's drift and evidence layers (`?layer=drift|evidence`), each cell judged by
// core/drift.h's JudgeDrift, the same judgement GET /api/v1/drift and /check give.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "core/declared.h"
#include "core/status.h"
#include "core/suite.h"
#include "store/store.h"

namespace gauntlet::api {

// The declared support stored for `suite`'s name, reparsed against this version (a later version
// may have dropped a value a rule names); nullopt when none was put. `source` (may be null) gets
// the stored body's {"url", "version"} and "updated_at". Errors: Conflict when the stored rules no
// longer fit this version, Internal. Uses `store` for the call only.
Result<std::optional<Declared>> DeclaredFor(store::Store& store, const Suite& suite, nlohmann::json* source);

// Adds to each cell of matrix `m` (store/analytics.h's Matrix answer) the layer `layer` ("drift" or
// "evidence"), judged over every done trial of the matrix's suite version (and fingerprint, when
// `fingerprint` is set). A drift cell: {"kind", "counts", "config_key", "declared_by", "signature",
// "metric", "reason"} of its most severe item, null where no config of the cell ran; an evidence
// cell: the weakest level over its configs (what holds for each of them) and "evidence_counts".
// Errors: Invalid naming suite_version for an all-versions matrix, the loader's bound, Conflict.
[[nodiscard]] Status AddJudgedLayer(store::Store& store, const std::string& layer, const std::optional<std::string>& fingerprint,
                                    nlohmann::json* m);

}  // namespace gauntlet::api
