// Reading a file the trial wrote (a result file, a JUnit report) without letting the trial choose
// what the worker reads: its name may be a symbolic link (to /dev/zero, to someone else's file), a
// FIFO with no writer, a device or a sparse file of any size. None of them may wedge the worker,
// fill its memory or be read as the trial's own.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace gauntlet::worker {

// Why ReadBoundedFile gave no text; each caller words it for its own file.
struct FileRefusal {
  enum class Kind {
    kMissing,     // no file at the path
    kSymlink,     // the path is a symbolic link (never followed)
    kCannotOpen,  // open failed otherwise: `error`
    kNotRegular,  // a FIFO, a directory, a device...: `mode`
    kTooLarge,    // fstat said `size` bytes, over the limit
    kGrew,        // within the limit at fstat, over it by the end of the read
    kCannotRead,  // fstat or read failed: `error`
    kOtherOwner,  // owned by `owner`, not by the user the caller asked for
  };
  Kind kind;
  int error = 0;     // errno, for kCannotOpen and kCannotRead
  mode_t mode = 0;   // st_mode, for kNotRegular
  int64_t size = 0;  // st_size, for kTooLarge
  uid_t owner = 0;   // st_uid, for kOtherOwner
};

// The whole text of the regular file at `path`, of at most `max_bytes`, or why not. Opens with
// O_NOFOLLOW | O_NONBLOCK, so neither a link nor a FIFO is followed or waited on; reads at most
// max_bytes + 1 bytes whatever the file claims or becomes. Never blocks on the file's kind; O(size).
// `owner`, when set: the file must belong to that user (a trial's own user: a file another user wrote,
// a neighbour's or the worker's, is never read as the trial's). Thread-safe.
std::variant<std::string, FileRefusal> ReadBoundedFile(const std::string& path, size_t max_bytes,
                                                       std::optional<uid_t> owner = std::nullopt);

// The kind of file `mode` names, as a phrase: "a FIFO", "a directory", "a character device", "a
// block device", "a socket", else "not a regular file". Pure.
const char* FileKindName(mode_t mode);

}  // namespace gauntlet::worker
