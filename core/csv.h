// RFC 4180 text: how one field is written in a CSV line. Shared by the API's ?format=csv answers
// and the CLI's --format csv, so both quote the same way.
#pragma once
#include <string>
#include <vector>

namespace gauntlet {

// Both pure and thread-safe.
// `s` as one CSV field: quoted (with doubled quotes) when it holds a comma, quote, CR or LF.
std::string CsvCell(const std::string& s);
// One CSV line of `cells`, ending in CRLF.
std::string CsvLine(const std::vector<std::string>& cells);

}  // namespace gauntlet
