// Query-string helpers of the answer routes (history, recommend, check, drift): a whole config named
// in a query (param.NAME=VALUE for /history, config.NAME=VALUE for /check), the suite version a
// query names, unknown keys and formats.
#pragma once
#include <string>

#include "core/status.h"
#include "core/suite.h"
#include "core/sweep.h"
#include "http/http.h"
#include "store/store.h"

#include <optional>
#include <set>
#include <vector>

namespace gauntlet::api {

// The config that `prefix`NAME=VALUE entries of `r`'s query name under `suite` (`suite_name` for
// messages). Invalid, naming the query key: a name that is no parameter, a value the parameter does
// not accept (when `check_values`), none given, or a parameter without a default left out. Pure.
Result<Config> ConfigFromQuery(const Suite& suite, const std::string& suite_name, const http::Request& r,
                               const std::string& prefix, bool check_values);

// The suite version `?suite=` and `?version=` (default: latest) name, parsed, with its store id and
// version set. Errors: Invalid naming suite/version, NotFound. Uses `store` for the call only.
Result<Suite> SuiteOfQuery(store::Store& store, const http::Request& r);
// A 400 naming the first query key that is neither in `allowed` nor starts with `prefix` (when not
// empty); nullopt when every key is known.
std::optional<http::Response> UnknownQueryKey(const http::Request& r, const std::set<std::string>& allowed,
                                              const std::string& prefix);
// "a,b,,c" -> a, b, c.
std::vector<std::string> SplitQueryList(const std::string& s);
// `?format=` (default json) when it is one of `formats`, else Invalid naming format.
Result<std::string> FormatOfQuery(const http::Request& r, const std::set<std::string>& formats);

}  // namespace gauntlet::api
