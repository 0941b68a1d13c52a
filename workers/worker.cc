#include "workers/worker.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <list>
#include <mutex>
#include <set>
#include <thread>

#include "core/hardware.h"
#include "core/self_exe.h"
#include "core/stop_signals.h"
#include "core/yaml_json.h"
#include "http/http_client.h"
#include "workers/nvml.h"
#include "workers/process.h"
#include "workers/trial_runner.h"

namespace gauntlet {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string HostName() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// Runs the preflight program; returns "" when the node may take trials, else the reason.
std::string Preflight(const WorkerOptions& o, const Inventory& inv, const std::string& exe_dir) {
  if (o.preflight == "off" || inv.gpus.empty()) return "";
  std::string prog = o.preflight == "auto" ? exe_dir + "/gauntlet-kernels" : o.preflight;
  if (o.preflight == "auto" && access(prog.c_str(), X_OK) != 0) return "";
  ProcessSpec spec;
  spec.argv = {prog, "preflight"};
  const char* path = getenv("PATH");
  spec.env = {{"PATH", path ? path : "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  if (const char* ld = getenv("LD_LIBRARY_PATH")) spec.env["LD_LIBRARY_PATH"] = ld;
  auto p = Process::Start(spec);
  if (!p.ok()) return "preflight could not start: " + p.status().message();
  std::string out;
  auto e = (*p)->Run(std::chrono::steady_clock::now() + std::chrono::minutes(5),
                     [&](std::string_view c) {
                       if (out.size() < 65536) out.append(c);
                     },
                     nullptr);
  if (e.exit_code && *e.exit_code == 0) return "";
  // 5: the tool sees no GPU. With GPUs declared by --inventory (a test fleet) that is expected;
  // judging the node on it would quarantine every simulated GPU node.
  if (e.exit_code && *e.exit_code == 5 && !o.inventory_file.empty()) return "";
  std::string last = out.substr(out.rfind('\n', out.size() > 1 ? out.size() - 2 : 0) + 1);
  return "preflight failed (" + (e.exit_code ? "exit " + std::to_string(*e.exit_code) : "signal") + "): " +
         last.substr(0, 300);
}

// Kills what a previous run of this worker left behind (it was SIGKILLed mid-trial): every process
// whose environment names a trial folder under this workdir, whatever its parent now is.
void SweepLeftovers(const std::string& workdir) {
  std::error_code ec;
  const std::string needle = "GAUNTLET_WORKDIR=" + workdir + "/trial-";
  int killed = 0;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.empty() || !isdigit(static_cast<unsigned char>(pid[0])) || std::stoi(pid) == getpid()) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), {});
    size_t at = env.find(needle);
    if (at != std::string::npos && (at == 0 || env[at - 1] == '\0')) {
      if (kill(std::stoi(pid), SIGKILL) == 0) ++killed;
    }
  }
  for (auto& e : fs::directory_iterator(workdir, ec))
    if (e.path().filename().string().rfind("trial-", 0) == 0) fs::remove_all(e.path(), ec);
  if (killed) spdlog::warn("killed {} process(es) left by an earlier run of this worker", killed);
}

}  // namespace

int RunWorker(const WorkerOptions& o) {
  sigset_t stop_set = BlockStopSignals();

  Inventory inv;
  std::string note;
  if (!o.inventory_file.empty()) {
    auto j = ReadJsonOrYaml(o.inventory_file);
    if (!j.ok()) {
      spdlog::error("--inventory: {}", j.status().message());
      return 2;
    }
    auto parsed = ParseInventory(*j);
    if (!parsed.ok()) {
      spdlog::error("--inventory {}: {}: {}", o.inventory_file, parsed.status().field(), parsed.status().message());
      return 2;
    }
    inv = *parsed;
    note = "inventory from " + o.inventory_file;
  } else {
    inv = DiscoverInventory(&note);
  }
  for (auto& [k, v] : o.labels) inv.labels[k] = v;
  const std::string name = o.name.empty() ? HostName() : o.name;
  const std::string exe_dir = SelfExeDir();
  std::error_code ec;
  fs::create_directories(o.workdir, ec);
  const std::string workdir = fs::absolute(o.workdir).string();
  SweepLeftovers(workdir);
  const int max_trials = o.max_trials > 0 ? o.max_trials
                                          : (inv.gpus.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                                                              : static_cast<int>(inv.gpus.size()));
  spdlog::info("worker {}: {} ({}), up to {} trial(s) at once", name, NodeHardware(inv), note, max_trials);

  std::atomic<bool> draining{false}, abort_all{false};
  // Set when RunWorker returns on its own (--exit-when-idle): the SIGTERM it then sends the signal
  // thread only ends that thread, from either sigwait, instead of starting a drain that waits for a
  // second signal forever (which kept batch jobs running after their worker stopped).
  std::atomic<bool> quitting{false};
  http::Client lease_client(o.server, o.token);
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_set, &sig);
    if (quitting) return;
    spdlog::info("{}: draining (running trials finish; a second signal stops them)", sig == SIGINT ? "SIGINT" : "SIGTERM");
    draining = true;
    lease_client.Interrupt();
    sigwait(&stop_set, &sig);
    if (quitting) return;
    spdlog::warn("second signal: stopping running trials");
    abort_all = true;
  });

  // Register (retrying while the daemon is away).
  int64_t node = 0;
  json reg = {{"name", name}, {"inventory", InventoryJson(inv)}, {"labels", inv.labels},
              {"fingerprint", {{"driver", inv.driver}, {"cuda", inv.cuda}}}};
  auto do_register = [&]() -> bool {
    int delay = 100;
    http::Client c(o.server, o.token);
    while (!draining) {
      auto r = c.Send("POST", "/api/v1/nodes/register", reg.dump());
      if (r.ok() && r->status == 200) {
        node = json::parse(r->body)["node"].get<int64_t>();
        return true;
      }
      if (r.ok() && (r->status == 401 || r->status == 403 || r->status == 422)) {
        spdlog::error("registration refused ({}): {}", r->status, r->body);
        return false;
      }
      spdlog::warn("cannot register with {}: {}", o.server, r.ok() ? std::to_string(r->status) : r.status().message());
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));  // backoff while the daemon is away
      delay = std::min(delay * 2, 2000);
    }
    return false;
  };
  if (!do_register()) {
    const bool stopped = draining.load();
    pthread_kill(signals.native_handle(), SIGTERM);  // let the signal thread end
    pthread_kill(signals.native_handle(), SIGTERM);
    signals.join();
    return stopped ? 0 : 3;
  }
  spdlog::info("registered as node {}", node);
  std::string why = Preflight(o, inv, exe_dir);
  auto last_preflight = std::chrono::steady_clock::now();
  if (!why.empty()) {
    spdlog::error("{}: quarantining this node", why);
    http::Client c(o.server, o.token);
    c.Send("POST", "/api/v1/nodes/" + std::to_string(node) + "/quarantine", json{{"reason", why}}.dump());
  }

  std::mutex mu;
  std::condition_variable cv;
  std::set<int> busy;
  int running = 0;
  struct Slot {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::list<Slot> threads;
  std::mutex fp_mu;
  std::map<std::string, json> fingerprints;
  std::mutex suite_mu;
  std::map<std::string, json> suites;  // "name@version" -> definition
  TrialRunnerEnv env;
  env.server = o.server;
  env.token = o.token;
  env.node_name = name;
  env.inv = &inv;
  env.workdir = workdir;
  env.exe_dir = exe_dir;
  env.pass_env = o.pass_env;
  env.kill_grace = std::chrono::milliseconds(o.kill_grace_ms);
  env.fp_mu = &fp_mu;
  env.fingerprints = &fingerprints;
  env.abort_all = &abort_all;

  auto idle_since = std::chrono::steady_clock::now();
  int delay = 50;
  while (!draining) {
    std::vector<int> free;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return running < max_trials || draining; });
      if (draining) break;
      for (auto& g : inv.gpus)
        if (!busy.count(g.index)) free.push_back(g.index);
      if (running > 0) idle_since = std::chrono::steady_clock::now();
    }
    if (o.exit_when_idle && running == 0 &&
        std::chrono::steady_clock::now() - idle_since > std::chrono::duration<double>(o.idle_exit_s)) {
      spdlog::info("idle for {} s: exiting", o.idle_exit_s);
      break;
    }
    if (o.preflight_period_s > 0 &&
        std::chrono::steady_clock::now() - last_preflight > std::chrono::seconds(o.preflight_period_s) && running == 0) {
      last_preflight = std::chrono::steady_clock::now();
      if (std::string w = Preflight(o, inv, exe_dir); !w.empty()) {
        http::Client c(o.server, o.token);
        c.Send("POST", "/api/v1/nodes/" + std::to_string(node) + "/quarantine", json{{"reason", w}}.dump());
      }
    }
    double wait = o.exit_when_idle ? std::min(o.wait_s, std::max(1.0, o.idle_exit_s / 2)) : o.wait_s;
    json have = json::array();
    {
      std::lock_guard lock(suite_mu);
      for (auto& [k, v] : suites) have.push_back(k);
    }
    auto r = lease_client.Send("POST", "/api/v1/nodes/" + std::to_string(node) + "/lease",
                               json{{"free_gpus", free}, {"wait_s", wait}, {"have_suites", have}}.dump(), "application/json",
                               std::chrono::milliseconds(static_cast<int64_t>(wait * 1000) + 15000));
    if (draining) {
      // A grant that raced with the drain is run anyway: handing it back would cost an attempt.
      if (!(r.ok() && r->status == 200)) break;
    }
    if (!r.ok() || r->status >= 500) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));  // backoff while the daemon is away
      delay = std::min(delay * 2, 2000);
      continue;
    }
    delay = 50;
    if (r->status == 404) {  // the daemon forgot this node (a fresh database): register again
      if (!do_register()) break;
      continue;
    }
    if (r->status == 204) continue;
    if (r->status != 200) {
      spdlog::error("lease answer {}: {}", r->status, r->body);
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    json grant = json::parse(r->body, nullptr, false);
    if (!grant.is_object() || !grant.contains("suite")) continue;
    {
      // Suite definitions travel once per version: keep them, and fill in grants that omit them.
      std::lock_guard lock(suite_mu);
      json& s = grant["suite"];
      const std::string key = s.value("key", "");
      if (s.contains("definition")) suites[key] = s["definition"];
      else if (suites.count(key)) s["definition"] = suites[key];
    }
    std::vector<int> gpus;
    for (auto& g : grant.value("gpus", json::array())) gpus.push_back(g.get<int>());
    {
      std::lock_guard lock(mu);
      for (int g : gpus) busy.insert(g);
      ++running;
    }
    // Join finished trial threads so a long-lived worker does not accumulate them.
    for (auto it = threads.begin(); it != threads.end();) {
      if (it->done) {
        it->thread.join();
        it = threads.erase(it);
      } else {
        ++it;
      }
    }
    spdlog::debug("trial {} leased (gpus {})", grant.value("trial", 0), grant["gpus"].dump());
    Slot& slot = threads.emplace_back();
    slot.thread = std::thread([&, grant, gpus, done = &slot.done] {
      RunTrial(env, grant);
      {
        std::lock_guard lock(mu);
        for (int g : gpus) busy.erase(g);
        --running;
      }
      *done = true;
      cv.notify_all();
    });
    if (draining) break;
  }
  // Drain: let running trials finish (a second signal or the drain timeout stops them).
  {
    std::unique_lock lock(mu);
    if (running > 0) spdlog::info("waiting for {} running trial(s)", running);
    if (!cv.wait_for(lock, std::chrono::milliseconds(o.drain_timeout_ms), [&] { return running == 0 || abort_all; })) {
      spdlog::warn("drain timeout: stopping running trials");
      abort_all = true;
    }
  }
  for (auto& t : threads) t.thread.join();
  spdlog::info("worker stopped");
  if (!abort_all) {
    // The signal thread waits for a signal that may never come: give it one.
    quitting = true;
    pthread_kill(signals.native_handle(), SIGTERM);
  }
  signals.join();
  return 0;
}

}  // namespace gauntlet
