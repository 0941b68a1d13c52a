// Bearer tokens with roles (docs/DESIGN.md "Security"), read from a tokens file that stores only hashes.
//
// Tokens file: one token per line, `ROLE sha256:HEX [NAME]`; '#' starts a comment. `gauntlet token`
// makes a token and prints its line. Roles: read < submit < admin; worker is separate (+ read).
#pragma once
#include <optional>
#include <string>
#include <unordered_map>

#include "core/sha256.h"
#include "core/status.h"

namespace gauntlet::http {

// kPublic: no token needed even where tokens are on (the static dashboard files hold no data).
enum class Role { kPublic, kRead, kSubmit, kWorker, kAdmin };

// The free functions are pure and thread-safe.
std::string RoleName(Role r);  // "public", "read", "submit", "worker", "admin"
std::optional<Role> ParseRole(const std::string& s);  // a tokens-file role (not "public"), or nullopt
// True if a token with role `have` may call a route that needs `need`.
bool Allows(Role have, Role need);
// The token of an Authorization header value "Bearer T": the scheme in any case (RFC 7235 makes it
// case-insensitive: "bearer", "BEARER"), one or more spaces, then a token that is not empty; else
// nullopt. O(length).
std::optional<std::string> BearerToken(const std::string& authorization);
// Lower-case hex SHA-256 of a token (core/sha256.h): what a tokens file and the store keep.
using gauntlet::Sha256Hex;
// A fresh secret: `prefix` and 64 hex digits from OpenSSL's CSPRNG (throws std::runtime_error if it
// has no entropy).
std::string NewSecret(const std::string& prefix);

// Immutable after Load: every method is thread-safe.
class Auth {
 public:
  // Loads the tokens file (hashes are matched as written: lower-case hex); Invalid if it cannot be
  // read, a line is malformed (named path:line) or it holds no token.
  static Result<Auth> Load(const std::string& path);
  // A tokens-file entry: its role and its NAME ("" when the line gives none).
  struct Token {
    Role role;
    std::string name;
  };
  // The entry of the token in an "Authorization: Bearer T" header value, or nullopt.
  std::optional<Token> Find(const std::string& authorization) const;
  // The role of the token in an "Authorization: Bearer T" header value, or nullopt.
  std::optional<Role> Check(const std::string& authorization) const;
  size_t size() const { return by_hash_.size(); }  // tokens loaded
  // Accepts `token` (the secret itself, hashed here) with `role` and `name` besides the file's: the
  // local worker's credential, made at start and never written anywhere. Not thread-safe: only
  // before the Auth is shared (before the router serves).
  void AddSecret(Role role, const std::string& token, const std::string& name) { by_hash_[Sha256Hex(token)] = Token{role, name}; }

 private:
  std::unordered_map<std::string, Token> by_hash_;
};

}  // namespace gauntlet::http
