// Suite bundles (docs/SUITE_FORMAT.md "Suite files"): the files of a suite's folder packed into one
// content-addressed archive, so `{suite_dir}` means the same files on every worker. The format is
// ours and plain: a header line, then per file a line `file MODE SIZE PATH` (MODE `x` executable or
// `-`) followed by SIZE bytes, then `end`. Files are sorted by path, so a folder packs to the same
// bytes (and SHA-256) on every machine. Every function here is pure (or touches only the paths it
// is given) and thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gauntlet {

// The most a bundle may hold: its archive bytes, its files, one path's length.
inline constexpr size_t kMaxBundleBytes = 16u << 20;
inline constexpr size_t kMaxBundleFiles = 2000;
inline constexpr size_t kMaxBundlePath = 1024;

struct BundleFile {
  std::string path;  // relative, '/'-separated, no '.', '..' or empty component
  bool executable = false;
  std::string data;
};

// A packed folder: the archive, how many files it holds, and what was left out and why
// ("link.py: a symbolic link"), for the person who packed it.
struct PackedFolder {
  std::string bytes;
  size_t files = 0;
  std::vector<std::string> skipped;
};

// Lower-case hex SHA-256 of `bytes` (OpenSSL).
std::string BundleSha256(std::string_view bytes);

// True if `s` is 64 lower-case hex digits.
bool IsSha256Hex(std::string_view s);

// Packs the regular files under `dir`, recursively. Left out (and listed in `skipped`): names
// starting with '.', `__pycache__` folders, symbolic links and anything not a plain file or folder.
// Invalid (field "bundle") when the files would exceed kMaxBundleBytes or kMaxBundleFiles, naming
// the limit; NotFound if `dir` is not a folder.
Result<PackedFolder> PackFolder(const std::string& dir);

// The archive's files, after checking its whole form: header, entries, sizes, paths (no absolute
// path, no '.', '..' or empty component, no duplicate, no file that is also a folder of another),
// and the limits above. Invalid (field "body") names what is wrong.
Result<std::vector<BundleFile>> ReadBundle(std::string_view bytes);

// Writes the archive's files under `dest`, which must not exist (it is created 0700): folders with
// mkdir, files with O_CREAT|O_EXCL|O_NOFOLLOW, so nothing in the archive can write outside `dest`
// or through a link. On an error `dest` may hold part of the files; the caller removes it.
Status ExtractBundle(std::string_view bytes, const std::string& dest);

// The first field of suite definition `def` that uses the {suite_dir} placeholder (e.g.
// "stages[0].argv[1]", "stages[1].env.CHECK", "fingerprint.argv[0]"), or "" if none does.
std::string FieldUsingSuiteDir(const nlohmann::json& def);

}  // namespace gauntlet
