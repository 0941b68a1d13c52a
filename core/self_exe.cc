#include "core/self_exe.h"

#include <unistd.h>

#include <climits>
#include <filesystem>

namespace gauntlet {

std::string SelfExe(const std::string& fallback) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : fallback;
}

std::string SelfExeDir() {
  std::string exe = SelfExe("");
  return exe.empty() ? "" : std::filesystem::path(exe).parent_path().string();
}

std::string SelfDataDir() {
  std::string dir = SelfExeDir();
  if (dir.empty()) return "";
  // bin/ and share/gauntlet/ are siblings under the prefix: the layout the install() rules write.
  return (std::filesystem::path(dir).parent_path() / "share" / "gauntlet").lexically_normal().string();
}

}  // namespace gauntlet
