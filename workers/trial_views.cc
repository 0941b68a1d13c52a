#include "workers/trial_views.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "proc/process.h"
#include "proc/stage_keeper.h"

namespace gauntlet::worker {

namespace fs = std::filesystem;

std::vector<std::string> TrialViews::UnderTmp(const std::vector<std::string>& paths) {
  std::vector<std::string> all;
  for (const std::string& p : paths) {
    if (p.empty()) continue;
    std::error_code ec;
    std::string n = fs::absolute(p, ec).lexically_normal().string();
    while (n.size() > 1 && n.back() == '/') n.pop_back();
    if (ec || n.rfind("/tmp/", 0) != 0) continue;
    all.push_back(n);
  }
  std::vector<std::string> out;
  for (const std::string& p : all) {
    bool inside = false;
    for (const std::string& q : all)
      if (q != p && p.rfind(q + "/", 0) == 0) inside = true;
    bool seen = false;
    for (const std::string& q : out) seen = seen || q == p;
    if (!inside && !seen) out.push_back(p);
  }
  return out;
}

std::unique_ptr<TrialViews> TrialViews::Configure(const std::string& mode, bool users_on, const std::string& workdir,
                                                  const std::vector<std::string>& shares, const std::string& prog,
                                                  std::string* error) {
  auto v = std::make_unique<TrialViews>();
  if (mode != "auto" && mode != "on" && mode != "off") {
    *error = "--trial-namespaces is auto, on or off (not '" + mode + "')";
    return nullptr;
  }
  v->workdir_ = workdir;
  v->shares_ = shares;
  for (const std::string& s : shares) {
    std::error_code ec;
    if (!fs::is_directory(s, ec)) {
      *error = "--trial-share " + s + ": not a folder";
      return nullptr;
    }
  }
  auto off = [&](const std::string& why) -> std::unique_ptr<TrialViews> {
    if (mode == "on") {
      *error = "--trial-namespaces on: " + why;
      return nullptr;
    }
    v->description_ = "namespaces off: " + why;
    return std::move(v);
  };
  if (mode == "off") return off("--trial-namespaces off");
  // Without a user of its own a stage could undo its view (it would be root inside it), and only
  // root may make one: the view comes with trial users or not at all.
  if (!users_on) return off("trial users are off");
  // A probe: a process in a view of its own, as a stage would be, that finds itself alone in /proc.
  // (Its Prepare also refuses more folders to keep than a view can bind.)
  const std::string probe = workdir + "/.view-probe";
  std::error_code ec;
  fs::remove_all(probe, ec);
  auto view = v->Prepare(probe, {});
  if (!view.ok()) return off(view.status().message());
  proc::ProcessSpec spec;
  spec.argv = {prog, "-c", "test \"$$\" = 2 && test -d /proc/1 && ! test -d /proc/3 && test -w /tmp"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.view = *view;
  auto p = proc::Process::Start(spec);
  proc::ExitInfoProc e;
  std::string out;
  if (p.ok())
    e = (*p)->Run(std::chrono::steady_clock::now() + std::chrono::seconds(20), [&](std::string_view s) { out += s; }, {});
  fs::remove_all(probe, ec);
  if (!p.ok() || e.exit_code != 0) {
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return off("the kernel did not give a probe its own mount and PID namespaces" + (out.empty() ? "" : " (" + out + ")"));
  }
  v->enabled_ = true;
  v->description_ = "own mount and PID namespaces (a private /tmp, its own /proc)";
  return v;
}

Result<proc::OwnView> TrialViews::Prepare(const std::string& folder, const std::vector<std::string>& keep) const {
  std::vector<std::string> wanted = {workdir_};
  wanted.insert(wanted.end(), shares_.begin(), shares_.end());
  wanted.insert(wanted.end(), keep.begin(), keep.end());
  const std::vector<std::string> kept = UnderTmp(wanted);
  if (kept.size() + 1 > proc::kMaxBinds) return Status::Internal("too many folders to keep under /tmp in a trial's view");
  const std::string tmp = folder + "/tmp";
  std::error_code ec;
  fs::create_directories(tmp, ec);
  // Root's, 0711 above and 1777 (sticky) for tmp itself: the trial's user writes its own files in
  // its /tmp, and cannot rename or replace the folders made for the kept paths.
  if (ec || chmod(folder.c_str(), 0711) != 0 || chmod(tmp.c_str(), 01777) != 0)
    return Status::Internal("cannot make the trial's view folder " + folder + (ec ? ": " + ec.message() : ""));
  proc::OwnView view;
  view.binds.push_back({tmp, "/tmp"});
  for (const std::string& k : kept) {
    std::error_code kec;
    if (!fs::is_directory(k, kec)) continue;
    // The path inside the trial's /tmp, folder by folder, each root's and 0755.
    std::string at = tmp;
    for (const auto& part : fs::path(k.substr(5))) {
      at += "/" + part.string();
      if (mkdir(at.c_str(), 0755) != 0 && errno != EEXIST)
        return Status::Internal("cannot make " + at + " in the trial's view: " + std::string(strerror(errno)));
    }
    view.binds.push_back({k, k});
  }
  return view;
}

}  // namespace gauntlet::worker
