// Where a worker's cgroups are (proc/cgroup_dirs.h), read from /proc files as hosts write them, and
// which folders a trial's view keeps under /tmp (workers/trial_views.h).
#include <gtest/gtest.h>

#include "proc/cgroup_dirs.h"
#include "workers/trial_views.h"

namespace gauntlet {
namespace {

// A hybrid host (systemd's "hybrid" layout; this repository's CI machine is one): controllers on v1,
// the process tree alone on v2 at /sys/fs/cgroup/unified.
constexpr const char* kHybridMounts =
    "25 24 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
    "29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:14 - cgroup cgroup rw,cpu,cpuacct\n"
    "30 25 0:27 / /sys/fs/cgroup/memory rw,nosuid shared:15 - cgroup cgroup rw,memory\n"
    "31 25 0:28 / /sys/fs/cgroup/pids rw,nosuid shared:16 - cgroup cgroup rw,pids\n";
constexpr const char* kHybridCgroup =
    "12:pids:/system.slice/gauntlet-worker.service\n"
    "6:memory:/system.slice/gauntlet-worker.service\n"
    "3:cpu,cpuacct:/system.slice/gauntlet-worker.service\n"
    "0::/system.slice/gauntlet-worker.service\n";

TEST(CgroupDirs, AHybridHostHasEachControllerOnV1AndTheTreeOnV2) {
  EXPECT_EQ(proc::CgroupDirFrom(kHybridMounts, kHybridCgroup, "memory"),
            "/sys/fs/cgroup/memory/system.slice/gauntlet-worker.service");
  EXPECT_EQ(proc::CgroupDirFrom(kHybridMounts, kHybridCgroup, "pids"), "/sys/fs/cgroup/pids/system.slice/gauntlet-worker.service");
  // A controller that shares its hierarchy with another is found by either name.
  EXPECT_EQ(proc::CgroupDirFrom(kHybridMounts, kHybridCgroup, "cpuacct"),
            "/sys/fs/cgroup/cpu,cpuacct/system.slice/gauntlet-worker.service");
  EXPECT_EQ(proc::CgroupDirFrom(kHybridMounts, kHybridCgroup, ""), "/sys/fs/cgroup/unified/system.slice/gauntlet-worker.service");
  EXPECT_EQ(proc::CgroupDirFrom(kHybridMounts, kHybridCgroup, "devices"), "");
}

TEST(CgroupDirs, AUnifiedHostHasNoV1AndTheRootCgroupIsItsMount) {
  const char* mounts = "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
  EXPECT_EQ(proc::CgroupDirFrom(mounts, "0::/user.slice/session-3.scope\n", ""), "/sys/fs/cgroup/user.slice/session-3.scope");
  EXPECT_EQ(proc::CgroupDirFrom(mounts, "0::/\n", ""), "/sys/fs/cgroup");
  EXPECT_EQ(proc::CgroupDirFrom(mounts, "0::/\n", "memory"), "");
}

TEST(CgroupDirs, AContainersSubtreeMountHoldsOnlyWhatLiesInsideIt) {
  // Docker without a cgroup namespace: the mount's root is the container's cgroup.
  const char* mounts = "640 630 0:31 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n";
  EXPECT_EQ(proc::CgroupDirFrom(mounts, "9:memory:/docker/abc\n", "memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(proc::CgroupDirFrom(mounts, "9:memory:/docker/abc/inner\n", "memory"), "/sys/fs/cgroup/memory/inner");
  EXPECT_EQ(proc::CgroupDirFrom(mounts, "9:memory:/docker/abcdef\n", "memory"), "");
  // Malformed lines are passed over.
  EXPECT_EQ(proc::CgroupDirFrom("garbage\n - \n", "nonsense\n0:\n", ""), "");
}

TEST(TrialViews, OnlyTheOutermostFoldersUnderTmpAreKept) {
  EXPECT_EQ(worker::TrialViews::UnderTmp({"/tmp/w", "/tmp/w/bundles", "/var/lib/gauntlet", "", "/tmp/share/", "/tmp/w",
                                          "/tmpfoo/x", "/tmp/a/../b"}),
            (std::vector<std::string>{"/tmp/w", "/tmp/share", "/tmp/b"}));
  EXPECT_TRUE(worker::TrialViews::UnderTmp({"/tmp", "/"}).empty());
}

}  // namespace
}  // namespace gauntlet
