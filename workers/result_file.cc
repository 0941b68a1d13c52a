#include "workers/result_file.h"

#include "workers/bounded_file.h"

#include <climits>
#include <cstdlib>
#include <cstring>

namespace gauntlet::worker {

namespace {
constexpr const char* kName = "GAUNTLET_RESULT_FILE";

Status Bad(const std::string& why) { return Status::Invalid(std::string(kName) + " " + why, "result_file"); }

// realpath(3) of `p`, or "" when it cannot be resolved.
std::string Real(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// Whether the folder holding `path` is `workdir` or inside it, links in the folders resolved.
bool InsideWorkdir(const std::string& path, const std::string& workdir) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = Real(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
  const std::string root = Real(workdir);
  if (dir.empty() || root.empty()) return false;
  return dir == root || (dir.size() > root.size() && dir.compare(0, root.size(), root) == 0 && dir[root.size()] == '/');
}

}  // namespace

Result<std::optional<std::string>> ReadResultFile(const std::string& path, const std::string& workdir,
                                                  std::optional<uid_t> owner) {
  auto read = ReadBoundedFile(path, kResultFileMaxBytes, owner);
  const std::string limit = std::to_string(kResultFileMaxBytes) + " bytes (1 MiB)";
  if (auto* no = std::get_if<FileRefusal>(&read)) {
    switch (no->kind) {
      case FileRefusal::Kind::kMissing: return std::optional<std::string>();  // the stage wrote none
      case FileRefusal::Kind::kSymlink:
        return Bad("is a symbolic link; it must be a regular file inside the trial's workdir");
      case FileRefusal::Kind::kCannotOpen: return Bad("cannot be opened: " + std::string(strerror(no->error)));
      case FileRefusal::Kind::kNotRegular:
        return Bad(std::string("is ") + FileKindName(no->mode) + "; it must be a regular file");
      case FileRefusal::Kind::kTooLarge:
        return Bad("is " + std::to_string(no->size) + " bytes, over the limit of " + limit);
      case FileRefusal::Kind::kGrew: return Bad("grew past the limit of " + limit);
      case FileRefusal::Kind::kCannotRead: return Bad("cannot be read: " + std::string(strerror(no->error)));
      case FileRefusal::Kind::kOtherOwner:
        return Bad("was written by user " + std::to_string(no->owner) + ", not by this trial's user (" +
                   std::to_string(owner.value_or(0)) + "); not read as the trial's");
    }
  }
  if (!InsideWorkdir(path, workdir)) return Bad("is not inside the trial's workdir " + workdir);
  return std::optional<std::string>(std::move(std::get<std::string>(read)));
}

}  // namespace gauntlet::worker
