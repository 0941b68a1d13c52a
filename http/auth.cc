#include "http/auth.h"

#include <openssl/rand.h>

#include <fstream>
#include <sstream>

namespace gauntlet::http {

std::string RoleName(Role r) {
  switch (r) {
    case Role::kPublic: return "public";
    case Role::kRead: return "read";
    case Role::kSubmit: return "submit";
    case Role::kWorker: return "worker";
    case Role::kAdmin: return "admin";
  }
  return "?";
}

std::optional<Role> ParseRole(const std::string& s) {
  if (s == "read") return Role::kRead;
  if (s == "submit") return Role::kSubmit;
  if (s == "worker") return Role::kWorker;
  if (s == "admin") return Role::kAdmin;
  return std::nullopt;
}

bool Allows(Role have, Role need) {
  if (have == Role::kAdmin || have == need || need == Role::kRead || need == Role::kPublic) return true;
  return false;
}

std::optional<std::string> BearerToken(const std::string& authorization) {
  static const char kScheme[] = "bearer";
  constexpr size_t n = sizeof kScheme - 1;
  if (authorization.size() <= n) return std::nullopt;
  for (size_t i = 0; i < n; ++i)
    if (tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return std::nullopt;
  size_t at = n;
  if (authorization[at] != ' ' && authorization[at] != '\t') return std::nullopt;
  while (at < authorization.size() && (authorization[at] == ' ' || authorization[at] == '\t')) ++at;
  if (at == authorization.size()) return std::nullopt;
  return authorization.substr(at);
}

std::string NewSecret(const std::string& prefix) {
  unsigned char b[32];
  if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("no randomness for a new secret");
  return prefix + LowerHex(b, sizeof b);
}

Result<Auth> Auth::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Invalid("cannot read tokens file " + path, "--tokens");
  Auth a;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream ss(line);
    std::string role, hash;
    if (!(ss >> role)) continue;
    auto r = ParseRole(role);
    if (!r || !(ss >> hash) || hash.rfind("sha256:", 0) != 0 || hash.size() != 7 + 64)
      return Status::Invalid(path + ":" + std::to_string(n) + ": expected 'ROLE sha256:HEX [NAME]' with ROLE one of "
                             "read, submit, worker, admin", "--tokens");
    std::string name;
    ss >> name;  // optional; the rest of the line is free text
    a.by_hash_[hash.substr(7)] = Token{*r, name};
  }
  if (a.by_hash_.empty()) return Status::Invalid(path + " holds no tokens", "--tokens");
  return a;
}

std::optional<Auth::Token> Auth::Find(const std::string& authorization) const {
  auto token = BearerToken(authorization);
  if (!token) return std::nullopt;
  auto it = by_hash_.find(Sha256Hex(*token));
  if (it == by_hash_.end()) return std::nullopt;
  return it->second;
}

std::optional<Role> Auth::Check(const std::string& authorization) const {
  auto t = Find(authorization);
  if (!t) return std::nullopt;
  return t->role;
}

}  // namespace gauntlet::http
