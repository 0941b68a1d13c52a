#include "proc/cgroup_dirs.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace gauntlet::proc {

namespace {
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s = s.substr(at + 1);
  }
}

bool Names(std::string_view list, std::string_view item) {
  for (std::string_view x : Split(list, ','))
    if (x == item) return true;
  return false;
}

}  // namespace

std::string ReadSmallFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string CgroupDirFrom(std::string_view mountinfo_text, std::string_view cgroup_text, std::string_view controller) {
  const bool v2 = controller.empty();
  // The cgroup's path in that hierarchy (/proc/self/cgroup: "ID:CONTROLLERS:PATH"; v2 is "0::PATH").
  std::string path;
  bool found = false;
  for (std::string_view line : Split(cgroup_text, '\n')) {
    const size_t a = line.find(':'), b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view ctrls = line.substr(a + 1, b - a - 1);
    if (v2 ? (line.substr(0, a) == "0" && ctrls.empty()) : Names(ctrls, controller)) {
      path = std::string(line.substr(b + 1));
      found = true;
      break;
    }
  }
  if (!found) return "";
  // Its mount (mountinfo: "ID PARENT DEV ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS").
  for (std::string_view line : Split(mountinfo_text, '\n')) {
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const std::vector<std::string_view> head = Split(line.substr(0, dash), ' ');
    const std::vector<std::string_view> tail = Split(line.substr(dash + 3), ' ');
    if (head.size() < 5 || tail.size() < 3) continue;
    if (v2 ? tail[0] != "cgroup2" : (tail[0] != "cgroup" || !Names(tail[2], controller))) continue;
    const std::string root(head[3]), mount(head[4]);
    // A mount of a subtree (a container's view) holds the cgroup only if it lies inside that root.
    std::string rel;
    if (root == "/") rel = path;
    else if (path == root) rel = "";
    else if (path.rfind(root + "/", 0) == 0) rel = path.substr(root.size());
    else continue;
    return mount + (rel == "/" ? "" : rel);
  }
  return "";
}

std::string OwnCgroupDir(std::string_view controller) {
  return CgroupDirFrom(ReadSmallFile("/proc/self/mountinfo"), ReadSmallFile("/proc/self/cgroup"), controller);
}

}  // namespace gauntlet::proc
