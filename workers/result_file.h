// Reading a stage's GAUNTLET_RESULT_FILE without letting the stage choose what the worker reads:
// the trial writes the file, so its name may be a symbolic link (to /dev/zero, to someone else's
// JSON), a FIFO with no writer, a device or a 1 GiB sparse file. None of them may wedge the worker,
// fill its memory or speak for the stage.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "core/status.h"

namespace gauntlet::worker {

// The most bytes a result file may hold (SUITE_FORMAT.md "Result file").
inline constexpr size_t kResultFileMaxBytes = 1u << 20;

// Reads `path`, which must be a regular file (opened with O_NOFOLLOW | O_NONBLOCK, so neither a
// link nor a FIFO is followed or waited on) in the folder `workdir` (or below it), of at most
// kResultFileMaxBytes. Returns nullopt when there is no file (the stage wrote none), its text when
// it is fine, or kInvalid naming why it cannot be used ("GAUNTLET_RESULT_FILE is a symbolic
// link..."). Never blocks on the file's kind; O(size). Thread-safe.
// `owner`, when set, must own the file (the trial's user: ReadBoundedFile).
Result<std::optional<std::string>> ReadResultFile(const std::string& path, const std::string& workdir,
                                                  std::optional<uid_t> owner = std::nullopt);

}  // namespace gauntlet::worker
