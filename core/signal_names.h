// Signal names <-> numbers for signatures and for `gauntlet classify --signal NAME`. In core/, not
// proc/: the classifier (which depends on core alone) names signals in its signatures
// ("crashed:signal:SIGSEGV"), and the worker's stages name them in their outcomes the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gauntlet {

// "SIGSEGV" for 11; "SIG<n>" for numbers without a name. Pure, thread-safe.
std::string SignalName(int signal);
// Accepts "SIGSEGV", "SEGV", "segv" or "11"; nullopt when unknown.
std::optional<int> SignalNumber(std::string_view name);

}  // namespace gauntlet
