#include "core/bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/sha256.h"
#include "core/suite.h"

namespace gauntlet {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kHeader = "gauntlet-bundle 1\n";
constexpr std::string_view kEnd = "end\n";

std::string Mib(size_t n) { return std::to_string(n >> 20) + " MiB"; }

Status Bad(const std::string& m) { return Status::Invalid("not a suite bundle: " + m, "body"); }

// A path the archive may name: relative, components neither empty nor '.' nor '..', no NUL or
// newline (the entry line ends at one), within kMaxBundlePath.
std::string PathProblem(std::string_view p) {
  if (p.empty()) return "an empty path";
  if (p.size() > kMaxBundlePath) return "a path over " + std::to_string(kMaxBundlePath) + " characters";
  if (p.front() == '/') return "an absolute path";
  if (p.find('\0') != std::string_view::npos || p.find('\n') != std::string_view::npos) return "a path with a NUL or newline";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return "a path with an empty, '.' or '..' component";
    start = end + 1;
  }
  return "";
}

bool Skipped(const std::string& name) { return name.empty() || name[0] == '.' || name == "__pycache__"; }

}  // namespace

std::string BundleSha256(std::string_view bytes) { return Sha256Hex(bytes); }

bool IsSha256Hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Result<PackedFolder> PackFolder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + " is not a folder");
  const fs::path root = fs::path(dir);
  PackedFolder out;
  std::vector<std::pair<std::string, fs::path>> files;  // relative path, full path
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  if (ec) return Status::Invalid("cannot read " + dir + ": " + ec.message(), "bundle");
  for (; it != end; it.increment(ec)) {
    if (ec) return Status::Invalid("cannot read " + dir + ": " + ec.message(), "bundle");
    const fs::path& p = it->path();
    const std::string rel = fs::relative(p, root, ec).generic_string();
    if (Skipped(p.filename().string())) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec)) {
      out.skipped.push_back(rel + ": a symbolic link (bundles hold plain files only)");
      continue;
    }
    if (it->is_directory(ec)) continue;
    if (!it->is_regular_file(ec)) {
      out.skipped.push_back(rel + ": not a plain file");
      continue;
    }
    if (!PathProblem(rel).empty()) {
      out.skipped.push_back(rel + ": " + PathProblem(rel));
      continue;
    }
    files.emplace_back(rel, p);
  }
  std::sort(files.begin(), files.end());
  if (files.size() > kMaxBundleFiles)
    return Status::Invalid(dir + " holds " + std::to_string(files.size()) + " files; a suite bundle holds at most " +
                               std::to_string(kMaxBundleFiles) + ": keep the suite in a folder of its own",
                           "bundle");
  out.bytes = kHeader;
  for (auto& [rel, full] : files) {
    std::ifstream in(full, std::ios::binary);
    std::stringstream data;
    data << in.rdbuf();
    if (!in) return Status::Invalid("cannot read " + full.string(), "bundle");
    const std::string d = data.str();
    const bool x = (fs::status(full, ec).permissions() & fs::perms::owner_exec) != fs::perms::none;
    out.bytes += std::string("file ") + (x ? "x" : "-") + " " + std::to_string(d.size()) + " " + rel + "\n";
    out.bytes += d;
    if (out.bytes.size() + kEnd.size() > kMaxBundleBytes)
      return Status::Invalid("the files of " + dir + " exceed the suite bundle limit of " + Mib(kMaxBundleBytes) + " (" +
                                 std::to_string(kMaxBundleBytes) + " bytes): keep the suite in a folder of its own",
                             "bundle");
  }
  out.bytes += kEnd;
  out.files = files.size();
  return out;
}

Result<std::vector<BundleFile>> ReadBundle(std::string_view b) {
  if (b.size() > kMaxBundleBytes)
    return Status::Invalid("the bundle is " + std::to_string(b.size()) + " bytes, over the limit of " +
                               std::to_string(kMaxBundleBytes) + " (" + Mib(kMaxBundleBytes) + ")",
                           "body");
  if (b.substr(0, kHeader.size()) != kHeader) return Bad("it does not start with \"gauntlet-bundle 1\"");
  size_t at = kHeader.size();
  std::vector<BundleFile> out;
  std::set<std::string> paths, folders;
  while (true) {
    const size_t nl = b.find('\n', at);
    if (nl == std::string_view::npos || nl - at > kMaxBundlePath + 64) return Bad("an entry line is cut off or too long");
    const std::string line(b.substr(at, nl - at));
    at = nl + 1;
    if (line == "end") break;
    // file MODE SIZE PATH
    if (line.rfind("file ", 0) != 0 || line.size() < 9 || (line[5] != 'x' && line[5] != '-') || line[6] != ' ')
      return Bad("an entry line is not `file MODE SIZE PATH`");
    const size_t sp = line.find(' ', 7);
    if (sp == std::string::npos || sp == 7 || sp - 7 > 9) return Bad("an entry's size is missing or too large");
    const std::string size_text = line.substr(7, sp - 7);
    if (!std::all_of(size_text.begin(), size_text.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return Bad("an entry's size is not a number");
    const size_t size = std::stoul(size_text);
    BundleFile f;
    f.executable = line[5] == 'x';
    f.path = line.substr(sp + 1);
    if (std::string why = PathProblem(f.path); !why.empty()) return Bad("an entry names " + why + ": " + f.path.substr(0, 200));
    if (size > b.size() - at) return Bad(f.path + " is cut off");
    f.data = std::string(b.substr(at, size));
    at += size;
    if (!paths.insert(f.path).second) return Bad(f.path + " appears twice");
    for (size_t s = f.path.find('/'); s != std::string::npos; s = f.path.find('/', s + 1)) folders.insert(f.path.substr(0, s));
    out.push_back(std::move(f));
    if (out.size() > kMaxBundleFiles) return Bad("more than " + std::to_string(kMaxBundleFiles) + " files");
  }
  if (at != b.size()) return Bad("bytes after its end");
  for (auto& d : folders)
    if (paths.count(d)) return Bad(d + " is both a file and a folder");
  return out;
}

Status ExtractBundle(std::string_view bytes, const std::string& dest) {
  auto files = ReadBundle(bytes);
  if (!files.ok()) return files.status();
  if (::mkdir(dest.c_str(), 0700) != 0) return Status::Internal("cannot create " + dest + ": " + strerror(errno));
  for (auto& f : *files) {
    // Folders first, one component at a time: mkdir never follows a link, and the folder is ours.
    for (size_t s = f.path.find('/'); s != std::string::npos; s = f.path.find('/', s + 1)) {
      const std::string sub = dest + "/" + f.path.substr(0, s);
      if (::mkdir(sub.c_str(), 0700) != 0 && errno != EEXIST) return Status::Internal("cannot create " + sub + ": " + strerror(errno));
      struct stat st {};
      if (::lstat(sub.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Status::Internal(sub + " is not a folder");
    }
    const std::string path = dest + "/" + f.path;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f.executable ? 0700 : 0600);
    if (fd < 0) return Status::Internal("cannot create " + path + ": " + strerror(errno));
    size_t done = 0;
    while (done < f.data.size()) {
      const ssize_t n = ::write(fd, f.data.data() + done, f.data.size() - done);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        ::close(fd);
        return Status::Internal("cannot write " + path + ": " + strerror(errno));
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) return Status::Internal("cannot write " + path + ": " + strerror(errno));
  }
  return Status::Ok();
}

std::string FieldUsingSuiteDir(const json& def) {
  auto uses = [](const json& v) {
    if (!v.is_string()) return false;
    auto ph = PlaceholdersIn(v.get<std::string>());
    return std::find(ph.begin(), ph.end(), "suite_dir") != ph.end();
  };
  auto in_argv = [&](const json& argv, const std::string& f) -> std::string {
    if (!argv.is_array()) return "";
    for (size_t i = 0; i < argv.size(); ++i)
      if (uses(argv[i])) return f + "[" + std::to_string(i) + "]";
    return "";
  };
  if (!def.is_object()) return "";
  if (def.contains("fingerprint") && def["fingerprint"].is_object())
    if (auto f = in_argv(def["fingerprint"].value("argv", json()), "fingerprint.argv"); !f.empty()) return f;
  const json stages = def.value("stages", json::array());
  if (!stages.is_array()) return "";
  for (size_t i = 0; i < stages.size(); ++i) {
    if (!stages[i].is_object()) continue;
    const std::string f = "stages[" + std::to_string(i) + "]";
    if (auto a = in_argv(stages[i].value("argv", json()), f + ".argv"); !a.empty()) return a;
    if (stages[i].contains("env") && stages[i]["env"].is_object())
      for (auto& [k, v] : stages[i]["env"].items())
        if (uses(v)) return f + ".env." + k;
  }
  return "";
}

}  // namespace gauntlet
