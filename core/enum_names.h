// The spelling of an enum whose enumerators are 0..N-1 in a table of names, and back: the one lookup
// the vocabulary's small enums (trial, node, sweep and bisection states) share.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace gauntlet {

// names[e]: the spelling of `e`. `names` lists every enumerator, in enumerator order. Pure.
template <class E, size_t N>
constexpr std::string_view NameIn(const std::string_view (&names)[N], E e) {
  return names[static_cast<size_t>(e)];
}

// The enumerator spelled `name` in `names`, or nullopt for anything else (including ""). Pure.
template <class E, size_t N>
constexpr std::optional<E> ParseIn(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace gauntlet
