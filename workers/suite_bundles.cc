#include "workers/suite_bundles.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "core/bundle.h"

namespace gauntlet::worker {
namespace fs = std::filesystem;

SuiteBundles::SuiteBundles(std::string workdir, DaemonLink& daemon)
    : root_(std::move(workdir) + "/bundles"), daemon_(daemon) {
  // Unpackings an earlier run left half done (it died meanwhile) are never used: remove them.
  std::error_code ec;
  for (auto& e : fs::directory_iterator(root_, ec))
    if (e.path().filename().string().rfind(".tmp-", 0) == 0) fs::remove_all(e.path(), ec);
}

Result<std::string> SuiteBundles::Folder(const std::string& sha256) {
  // The hash becomes a folder name: only 64 hex digits may, never a path.
  if (!IsSha256Hex(sha256)) return Status::Invalid("the grant names a suite bundle that is no SHA-256: " + sha256.substr(0, 80));
  std::shared_ptr<std::mutex> one;
  {
    std::lock_guard lock(mu_);
    auto& m = fetching_[sha256];
    if (!m) m = std::make_shared<std::mutex>();
    one = m;
  }
  std::lock_guard fetch(*one);
  const std::string dest = root_ + "/" + sha256;
  std::error_code ec;
  // Only a finished unpacking is ever renamed to its hash, so a folder of that name is whole.
  if (fs::is_directory(dest, ec)) return dest;
  BundleAnswer a = daemon_.FetchBundle(sha256);
  if (!a.ok()) return Status(Code::kUnavailable, "cannot fetch suite bundle " + sha256.substr(0, 12) + ": " + a.detail);
  const std::string got = BundleSha256(a.bytes);
  if (got != sha256)
    return Status(Code::kUnavailable, "suite bundle " + sha256.substr(0, 12) + " arrived with SHA-256 " + got.substr(0, 12) +
                                          ": refused (damaged in transit, or not the daemon's)");
  fs::create_directories(root_, ec);
  static std::atomic<int> seq{0};
  const std::string tmp = root_ + "/.tmp-" + sha256 + "-" + std::to_string(getpid()) + "-" + std::to_string(seq++);
  fs::remove_all(tmp, ec);
  if (Status s = ExtractBundle(a.bytes, tmp); !s.ok()) {
    fs::remove_all(tmp, ec);
    return Status(s.code(), "suite bundle " + sha256.substr(0, 12) + ": " + s.message());
  }
  fs::rename(tmp, dest, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    return Status::Internal("cannot keep suite bundle " + sha256.substr(0, 12) + " in " + dest + ": " + ec.message());
  }
  spdlog::info("suite bundle {} fetched: {} bytes in {}", sha256.substr(0, 12), a.bytes.size(), dest);
  return dest;
}

}  // namespace gauntlet::worker
