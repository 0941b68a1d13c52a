// How wide text is on a terminal: the measure the matrix's cell texts are cut by, in the CLI's
// tables and the daemon's Markdown alike.
#pragma once
#include <string>

namespace gauntlet {

// Columns `s` takes on a terminal: colour codes take none, emoji and CJK take two. Pure.
size_t DisplayWidth(const std::string& s);
// `s` cut to at most `cols` columns (DisplayWidth), its end replaced by "…" when cut; colour codes are
// kept, and a cut coloured text gets a reset so the colour does not run on. Pure.
std::string CutToWidth(const std::string& s, size_t cols);

}  // namespace gauntlet
