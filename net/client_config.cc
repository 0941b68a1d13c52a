#include "net/client_config.h"

#include <cstdlib>
#include <fstream>

#include "net/http_client.h"

namespace gauntlet::net {

std::string ConfigPath() {
  if (const char* p = getenv("GAUNTLET_CONFIG"); p && *p) return p;
  if (const char* x = getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/gauntlet/config";
  if (const char* h = getenv("HOME"); h && *h) return std::string(h) + "/.config/gauntlet/config";
  return "";
}

void Resolve(Conn* c) {
  if (c->server.empty())
    if (const char* s = getenv("GAUNTLET_SERVER")) c->server = s;
  if (c->token.empty())
    if (const char* t = getenv("GAUNTLET_TOKEN")) c->token = t;
  if (c->ca_file.empty())
    if (const char* f = getenv("GAUNTLET_CA_FILE")) c->ca_file = f;
  if (c->timeout_s <= 0)
    if (const char* t = getenv("GAUNTLET_TIMEOUT")) c->timeout_s = atof(t);
  if (c->timeout_s <= 0) c->timeout_s = 30;
  if (c->server.empty() || c->token.empty() || c->ca_file.empty()) {
    std::ifstream in(ConfigPath());
    std::string line;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t\r") + 1);
      return s;
    };
    while (std::getline(in, line)) {
      line = trim(line);
      auto eq = line.find('=');
      if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
      std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
      // Quoted values are allowed, as in shell-style config files.
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
      if (k == "server" && c->server.empty()) c->server = v;
      if (k == "token" && c->token.empty()) c->token = v;
      if (k == "ca_file" && c->ca_file.empty()) c->ca_file = v;
    }
  }
  if (c->server.empty()) c->server = "http://127.0.0.1:8080";
  // A bare host:port is what people type; the client wants a URL.
  if (c->server.find("://") == std::string::npos) c->server = "http://" + c->server;
  while (!c->server.empty() && c->server.back() == '/') c->server.pop_back();
  SetDefaultCaFile(c->ca_file);
}

}  // namespace gauntlet::net
