// The matrix as store/matrix.cc computed it before the interned fold (tests/unit/matrix_reference.cc):
// the reference the new fold's answers are compared with.
#pragma once
#include <nlohmann/json.hpp>

#include "store/analytics.h"

namespace gauntlet::store::reference {

// store::Matrix's answer by the old rule (a map of one ConfigCell of strings per config).
Result<nlohmann::json> ReferenceMatrix(Store& store, const MatrixQuery& q, QueryBudget* budget = nullptr);

}  // namespace gauntlet::store::reference
