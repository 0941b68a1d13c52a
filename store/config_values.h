// A stored config's parameter values, read without building a JSON tree: the matrix reads one
// config per trial (200,000 in a big sweep), and a parse into nlohmann's tree and back to text was
// most of its time. Configs are stored as ConfigJson writes them (a flat object of strings).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::store {

// Fills (*values)[i] with params[i]'s value in `config` as JsonText (core/json_text.h) gives it, ""
// where absent, when `config` is a flat JSON object of plain strings (no escapes, ASCII); returns
// false, leaving *values unspecified, for any other text, which the caller then parses in full.
// Pure; thread-safe.
[[nodiscard]] bool FlatConfigValues(std::string_view config, const std::vector<std::string>& params,
                                    std::vector<std::string>* values);

}  // namespace gauntlet::store
