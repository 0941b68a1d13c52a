// A test fixture: a small tmpfs mounted for a test to fill, so that writes under it meet ENOSPC for
// real. Mounting needs root (or CAP_SYS_ADMIN); where it fails, mounted() is false and why() says
// why, for the test to skip visibly.
#pragma once
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace gauntlet::test {

// A tmpfs of `mb` MiB at `dir`, unmounted on destruction.
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& dir, int mb) : dir_(dir) {
    std::filesystem::create_directories(dir);
    const std::string opts = "size=" + std::to_string(mb) + "m";
    mounted_ = mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0;
    if (!mounted_) why_ = std::string("mount -t tmpfs failed: ") + strerror(errno);
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }

  // Writes a file until the file system refuses: the disk is full.
  void Fill(const std::string& name) {
    int fd = open((dir_ + "/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    std::string block(64 * 1024, 'x');
    while (write(fd, block.data(), block.size()) > 0) {
    }
    for (size_t n = 4096; n > 0; n /= 2)  // the last few pages
      while (write(fd, block.data(), n) > 0) {
      }
    close(fd);
  }

 private:
  std::string dir_, why_;
  bool mounted_ = false;
};

}  // namespace gauntlet::test
