#include "workers/junit_file.h"

#include <cstring>

#include "classifier/junit_report.h"
#include "workers/bounded_file.h"

namespace gauntlet::worker {

Result<classifier::TestReport> ReadJUnitFile(const std::string& path, std::optional<uid_t> owner) {
  const std::string what = "junit file " + path + ": ";
  const std::string mib = std::to_string(kMaxJUnitBytes >> 20) + " MiB";
  // Never followed: a test that leaves a symlink there cannot make the worker read another file,
  // nor a FIFO left there hang it.
  auto read = ReadBoundedFile(path, kMaxJUnitBytes, owner);
  if (auto* no = std::get_if<FileRefusal>(&read)) {
    switch (no->kind) {
      case FileRefusal::Kind::kMissing: return Status::Invalid(what + "missing (the test runner wrote no report)");
      case FileRefusal::Kind::kSymlink: return Status::Invalid(what + "is a symlink; not followed");
      case FileRefusal::Kind::kCannotOpen: return Status::Invalid(what + "cannot be opened: " + std::strerror(no->error));
      case FileRefusal::Kind::kNotRegular: return Status::Invalid(what + "not a regular file");
      case FileRefusal::Kind::kTooLarge:
        return Status::Invalid(what + "larger than " + mib + " (" + std::to_string(no->size) + " bytes); not read");
      case FileRefusal::Kind::kGrew: return Status::Invalid(what + "larger than " + mib + "; not read");
      case FileRefusal::Kind::kCannotRead: return Status::Invalid(what + "cannot be read: " + std::strerror(no->error));
      case FileRefusal::Kind::kOtherOwner:
        return Status::Invalid(what + "was written by user " + std::to_string(no->owner) + ", not by this trial's user (" +
                               std::to_string(owner.value_or(0)) + "); not read as the trial's");
    }
  }
  const std::string& data = std::get<std::string>(read);
  if (data.empty()) return Status::Invalid(what + "empty");
  auto r = classifier::ParseJUnitXml(data);
  if (!r.ok()) return Status::Invalid(what + r.status().message());
  return r;
}

}  // namespace gauntlet::worker
