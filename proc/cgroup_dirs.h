// Where this process's own cgroups are: the folder of its cgroup in the v2 hierarchy, and in each
// v1 hierarchy that holds a given controller (memory, pids, devices). Hosts mix them: a hybrid host
// (systemd's default before v2 was) mounts both, with the controllers on v1 and only the process
// tree (and cgroup.kill) on v2; GPU clusters on older distributions are v1 alone.
#pragma once
#include <string>
#include <string_view>

namespace gauntlet::proc {

// The folder of the cgroup that /proc/self/cgroup's `cgroup_text` names, under the mount that
// /proc/self/mountinfo's `mountinfo_text` shows for it: for `controller` "" the cgroup2 mount and
// the "0::" line; else the v1 mount whose options name `controller` and the line whose
// controllers do. "" when there is no such mount or line, or the cgroup lies outside the mount's
// root. Pure.
std::string CgroupDirFrom(std::string_view mountinfo_text, std::string_view cgroup_text, std::string_view controller);

// The whole of a small file (a /proc or cgroup file); "" when it cannot be read. Thread-safe.
std::string ReadSmallFile(const std::string& path);

// CgroupDirFrom over this process's own /proc/self files. Reads them at each call; thread-safe.
std::string OwnCgroupDir(std::string_view controller);

}  // namespace gauntlet::proc
