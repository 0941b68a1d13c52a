// SHA-256 as the rest of gauntlet writes it: lower-case hex. One implementation (OpenSSL) for the
// suite bundles' content addresses (core/bundle.h) and the tokens' stored hashes (http/auth.h).
// Pure; thread-safe.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace gauntlet {

// The SHA-256 of `bytes`, as 64 lower-case hex digits.
std::string Sha256Hex(std::string_view bytes);
// `n` bytes at `b` as 2n lower-case hex digits.
std::string LowerHex(const unsigned char* b, size_t n);

}  // namespace gauntlet
