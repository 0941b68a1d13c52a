// A stored config's parameter values, read without building a JSON tree: the matrix reads one
// config per trial (200,000 in a big sweep), and a parse into nlohmann's tree and back to text was
// most of its time. Configs are stored as ConfigJson writes them (a flat object of strings).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gauntlet::store {

// Fills (*values)[i] with params[i]'s value in `config` as JsonText (core/json_text.h) gives it, ""
// where absent, when `config` is a flat JSON object of plain strings (no escapes, ASCII); returns
// false, leaving *values unspecified, for any other text, which the caller then parses in full.
// Pure; thread-safe.
[[nodiscard]] bool FlatConfigValues(std::string_view config, const std::vector<std::string>& params,
                                    std::vector<std::string>* values);
// FlatConfigValues with each value a view into `config` (valid while it is): no string per value.
[[nodiscard]] bool FlatConfigViews(std::string_view config, const std::vector<std::string>& params,
                                   std::vector<std::string_view>* values);
// Fills *entries with the members of `text` when it is a flat JSON object of plain-string keys
// (as FlatConfigValues reads them), each key once, and plain integer values (-?[0-9]{1,18}), in text
// order: what nlohmann's parser would give for it, without its tree (a trial's attempt counts, a
// cell's counts). False for any other text, which the caller then parses in full. Pure; thread-safe.
[[nodiscard]] bool FlatIntObject(std::string_view text, std::vector<std::pair<std::string_view, int64_t>>* entries);

}  // namespace gauntlet::store
