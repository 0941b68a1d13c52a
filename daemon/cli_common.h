// Shared pieces of the client subcommands: server and token resolution, API calls, error lines, tables.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "api/http_client.h"

namespace gauntlet::cli {

struct Conn {
  std::string server;  // --server, GAUNTLET_SERVER, ~/.config/gauntlet/config, or http://127.0.0.1:8080
  std::string token;   // --token, GAUNTLET_TOKEN, the config file
};

// Fills unset fields from the environment, then the config file, then defaults.
void Resolve(Conn* c);

// Calls the API; on success returns the parsed body (null for an empty body). On failure prints one
// line ("gauntlet: 422 Unprocessable Entity: parameters.x: value 'y' is not declared") to stderr and
// returns nullopt. `status` receives the HTTP status (0 when unreachable).
std::optional<nlohmann::json> Call(http::Client& client, const std::string& method, const std::string& target,
                                   const std::string& body = {}, int* status = nullptr);
// The same for non-JSON answers (CSV, logs).
std::optional<http::ClientResponse> CallRaw(http::Client& client, const std::string& method, const std::string& target,
                                            const std::string& body = {});

// Prints rows as an aligned text table with a header.
void PrintTable(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows);
// True if stdout is a terminal (colours, progress bars).
bool IsTty();
// ANSI colour for a verdict on a terminal ("" when not a terminal).
std::string VerdictColor(const std::string& verdict);
std::string Reset();
std::string Str(const nlohmann::json& v);

}  // namespace gauntlet::cli
