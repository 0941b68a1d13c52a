#include "daemon/cli_common.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace gauntlet::cli {
using nlohmann::json;

void Resolve(Conn* c) {
  if (c->server.empty())
    if (const char* s = getenv("GAUNTLET_SERVER")) c->server = s;
  if (c->token.empty())
    if (const char* t = getenv("GAUNTLET_TOKEN")) c->token = t;
  if (c->server.empty() || c->token.empty()) {
    std::string path;
    if (const char* x = getenv("XDG_CONFIG_HOME")) path = std::string(x) + "/gauntlet/config";
    else if (const char* h = getenv("HOME")) path = std::string(h) + "/.config/gauntlet/config";
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      auto eq = line.find('=');
      if (eq == std::string::npos || line[0] == '#') continue;
      auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(" \t"));
        s.erase(s.find_last_not_of(" \t\r") + 1);
        return s;
      };
      std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
      if (k == "server" && c->server.empty()) c->server = v;
      if (k == "token" && c->token.empty()) c->token = v;
    }
  }
  if (c->server.empty()) c->server = "http://127.0.0.1:8080";
  while (!c->server.empty() && c->server.back() == '/') c->server.pop_back();
}

namespace {
void PrintError(int status, const std::string& body, const std::string& what) {
  json p = json::parse(body, nullptr, false);
  std::string line = "gauntlet: " + std::to_string(status);
  if (p.is_object()) {
    line += " " + p.value("title", "");
    if (p.contains("field") && p["field"].is_string() && !p["field"].get<std::string>().empty())
      line += ": " + p["field"].get<std::string>();
    line += ": " + p.value("detail", "");
  } else {
    line += ": " + what + (body.empty() ? "" : ": " + body.substr(0, 200));
  }
  std::cerr << line << "\n";
}
}  // namespace

std::optional<http::ClientResponse> CallRaw(http::Client& client, const std::string& method, const std::string& target,
                                            const std::string& body) {
  auto r = client.Send(method, target, body);
  if (!r.ok()) {
    std::cerr << "gauntlet: cannot reach " << client.base() << ": " << r.status().message() << "\n";
    return std::nullopt;
  }
  if (r->status >= 400) {
    PrintError(r->status, r->body, method + " " + target);
    return std::nullopt;
  }
  return *r;
}

std::optional<json> Call(http::Client& client, const std::string& method, const std::string& target,
                         const std::string& body, int* status) {
  auto r = client.Send(method, target, body);
  if (status) *status = r.ok() ? r->status : 0;
  if (!r.ok()) {
    std::cerr << "gauntlet: cannot reach " << client.base() << ": " << r.status().message() << "\n";
    return std::nullopt;
  }
  if (r->status >= 400) {
    PrintError(r->status, r->body, method + " " + target);
    return std::nullopt;
  }
  if (r->body.empty()) return json();
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) {
    std::cerr << "gauntlet: the server answered something that is not JSON\n";
    return std::nullopt;
  }
  return j;
}

std::string Str(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

bool IsTty() { return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr; }

std::string VerdictColor(const std::string& v) {
  if (!IsTty()) return "";
  if (v == "passed") return "\033[32m";
  if (v == "skipped" || v == "cancelled") return "\033[90m";
  if (v == "unsupported") return "\033[33m";
  if (v == "timeout" || v == "infra_error") return "\033[35m";
  if (v.empty()) return "";
  return "\033[31m";
}

std::string Reset() { return IsTty() ? "\033[0m" : ""; }

void PrintTable(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(head.size(), 0);
  auto width = [](const std::string& s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\033') {  // skip colour codes
        while (i < s.size() && s[i] != 'm') ++i;
        continue;
      }
      if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
    }
    return n;
  };
  for (size_t i = 0; i < head.size(); ++i) w[i] = width(head[i]);
  for (auto& r : rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto print = [&](const std::vector<std::string>& r) {
    std::string line;
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - width(r[i]) + 2, ' ');
    }
    std::cout << line << "\n";
  };
  print(head);
  for (auto& r : rows) print(r);
}

}  // namespace gauntlet::cli
