// Declared support stored per suite name (core/declared.h): the claims a published support table
// makes, kept as the canonical JSON that ParseDeclared reads. One declaration per suite; a PUT
// replaces it.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "core/status.h"
#include "store/store.h"

namespace gauntlet::store {

// Stores `canonical` (DeclaredJson's form, already validated) as suite `suite`'s declaration,
// replacing any. Errors: Internal (Unavailable when the disk is full). Thread-safe.
[[nodiscard]] Status PutDeclared(Store& store, const std::string& suite, const nlohmann::json& canonical);

// Suite `suite`'s declaration with "updated_at" (ms), or nullopt when it has none. Thread-safe.
Result<std::optional<nlohmann::json>> GetDeclared(Store& store, const std::string& suite);

}  // namespace gauntlet::store
