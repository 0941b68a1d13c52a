// A whole config named in a query string (param.NAME=VALUE for /history, config.NAME=VALUE for
// /check): every parameter of the suite given or taking its default.
#pragma once
#include <string>

#include "core/status.h"
#include "core/suite.h"
#include "core/sweep.h"
#include "http/http.h"

namespace gauntlet::api {

// The config that `prefix`NAME=VALUE entries of `r`'s query name under `suite` (`suite_name` for
// messages). Invalid, naming the query key: a name that is no parameter, a value the parameter does
// not accept (when `check_values`), none given, or a parameter without a default left out. Pure.
Result<Config> ConfigFromQuery(const Suite& suite, const std::string& suite_name, const http::Request& r,
                               const std::string& prefix, bool check_values);

}  // namespace gauntlet::api
