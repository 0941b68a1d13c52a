#include "core/signal_names.h"

#include <array>
#include <cctype>
#include <charconv>
#include <utility>

namespace gauntlet {
namespace {

// Linux x86-64/aarch64 numbering; the worker and the GPUs it drives only run there.
constexpr std::array<std::pair<int, std::string_view>, 20> kSignals{{
    {1, "SIGHUP"},   {2, "SIGINT"},   {3, "SIGQUIT"}, {4, "SIGILL"},   {5, "SIGTRAP"},
    {6, "SIGABRT"},  {7, "SIGBUS"},   {8, "SIGFPE"},  {9, "SIGKILL"},  {10, "SIGUSR1"},
    {11, "SIGSEGV"}, {12, "SIGUSR2"}, {13, "SIGPIPE"}, {14, "SIGALRM"}, {15, "SIGTERM"},
    {17, "SIGCHLD"}, {18, "SIGCONT"}, {19, "SIGSTOP"}, {24, "SIGXCPU"}, {31, "SIGSYS"},
}};

}  // namespace

std::string SignalName(int signal) {
  for (const auto& [n, name] : kSignals)
    if (n == signal) return std::string(name);
  return "SIG" + std::to_string(signal);
}

std::optional<int> SignalNumber(std::string_view name) {
  if (name.empty()) return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(name[0]))) {
    int n = 0;
    auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
    if (ec != std::errc() || p != name.data() + name.size() || n <= 0 || n > 64) return std::nullopt;
    return n;
  }
  std::string upper;
  for (char c : name) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (upper.rfind("SIG", 0) != 0) upper = "SIG" + upper;
  for (const auto& [n, sig] : kSignals)
    if (sig == upper) return n;
  return std::nullopt;
}

}  // namespace gauntlet
