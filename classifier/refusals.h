// Framework refusals in exception form: which final exceptions mean "this backend, package or
// config is not supported here" (verdict unsupported) rather than a crash, and their stable
// signature key. Decided from the exception's type and message only, so the same refusal gets
// the same key whatever the version, rank, shape or path. Rules and key formation:
// docs/CLASSIFIER.md ("Refusals"). Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/traceback.h"

namespace gauntlet::classifier {

// "unsupported:not_installed:<package>", "unsupported:head_dim", "unsupported:dtype",
// "unsupported:shape" or "unsupported:option"; nullopt when the exception is no refusal.
std::optional<std::string> RefusalKey(const ExceptionLine& e);

// Lowercase substrings one of which every refusal's line contains (its type or a phrase the
// decision reads): the built-in rule's prefilter needles, kept here so they cannot drift apart.
std::vector<std::string> RefusalNeedles();

// The package an exception says is missing from the node, normalised; nullopt when it says no
// such thing, or names a module that is not a known optional backend ("No module named
// 'bench_utils'" is the program's own bug).
std::optional<std::string> MissingPackage(const ExceptionLine& e);

// "flash-attn>=2.5" -> "flash_attn", "`flashinfer-python`" -> "flashinfer", "vllm._C" -> "vllm",
// "SentencePiece" -> "sentencepiece": lowercase, '-' -> '_', version specifiers and extras
// dropped, top-level module only, known aliases mapped to the import name. "" if nothing is left.
std::string NormalizePackage(std::string_view name);

}  // namespace gauntlet::classifier
