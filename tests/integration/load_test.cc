// Load the daemon must survive without failing its workers (issue 19): hundreds of heavy reads at
// once, and more idle connections than it has file descriptors. Real processes on loopback; the
// tests assert what happens (a lease kept, a result stored, an answer after the flood), never how
// fast. The EMFILE test reads the daemon's CPU time over a window to tell backing off from spinning.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

// Readers that ask for the sweep list (every sweep's counts over all its trials) in a loop, each
// on its own connection, until destroyed.
class Readers {
 public:
  Readers(const std::string& url, int n) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this, url] {
        net::Client c(url, "");
        while (!stop_) {
          auto r = c.Send("GET", "/api/v1/sweeps", "", "application/json", std::chrono::seconds(120));
          if (r.ok() && r->status == 200) ++answered_;
        }
      });
  }
  ~Readers() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  // Asks the readers to stop after their request in flight; the destructor waits for them. Thread-safe.
  void Stop() { stop_ = true; }
  int64_t answered() const { return answered_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> answered_{0};
  std::vector<std::thread> threads_;
};

TEST(Starvation, AWorkerKeepsItsLeaseAndItsResultWhileHundredsOfHeavyReadsRun) {
  TempDir dir;
  // A short lease (1.5 s, heartbeats every 250 ms): a heartbeat queued behind the reads for longer
  // loses it, which is what happened when reads and the worker protocol shared the I/O threads.
  Daemon d(dir.path(), FixtureSuites(), {"--lease-ttl-ms", "1500", "--heartbeat-ms", "250", "--threads", "2"});
  // 30,000 stored trials no node can run (sm_100): every list read counts them all.
  json big = d.PostJson("/api/v1/sweeps",
                        {{"suite", "fixture-cmd"},
                         {"parameters", {{"mode", {"pass"}}, {"seconds", CountingValues(100)}, {"count", CountingValues(300)}}},
                         {"targets", {{{"arch", "sm_100"}}}},
                         {"max_trials", 100000}},
                        201);
  ASSERT_EQ(big["trials"], 30000);
  // The test's own calls wait their turn behind the readers' too, as long as theirs may (on a slow
  // machine that is past the harness's 30 s: 300 queued reads of 30,000 trials each).
  d.SetRequestTimeout(std::chrono::seconds(120));
  auto t0 = std::chrono::steady_clock::now();
  Readers readers(d.url(), 300);
  ASSERT_TRUE(WaitFor([&] { return readers.answered() >= 300; }, std::chrono::seconds(120)));
  std::cerr << "reads ramped " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << "\n";
  auto w = StartWorker(dir.path(), d.url(), "w", json::object());
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"sleep"}}, {"seconds", {"3"}}}}},
                          201);
  const int64_t id = sweep["id"];
  const int64_t before = readers.answered();
  json done = d.WaitSweep(id, std::chrono::seconds(120));
  std::cerr << "sweep done " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << "\n";
  EXPECT_EQ(done["by_verdict"]["passed"], 1) << done.dump() << w->Log();
  json trials = d.GetJson("/api/v1/trials?sweep=" + std::to_string(id));
  ASSERT_TRUE(trials.is_object() && trials["items"].size() == 1u) << trials.dump();
  json t = d.GetJson("/api/v1/trials/" + trials["items"][0]["id"].dump());
  // Kept its first lease: no expiry re-queued it for a second attempt.
  EXPECT_EQ(t["attempt"], 1) << t.dump();
  EXPECT_EQ(t["verdict"], "passed");
  // And the readers were answered meanwhile: they wait their turn, they are not refused.
  EXPECT_GT(readers.answered(), before);
  // Done: the readers stop, and the daemon goes without answering the hundreds of reads still
  // queued (each counts 30,000 trials: draining them took a minute of both cores before).
  readers.Stop();
  d.Kill();
}

// The daemon's CPU time so far (user + system), from /proc/PID/stat, in seconds.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  std::istringstream rest(all.substr(all.rfind(')') + 2));
  std::string f;
  std::vector<std::string> fields;
  while (rest >> f) fields.push_back(f);
  // After "pid (comm) ": state is field 3, utime 14, stime 15 (1-based over the whole line).
  return (std::stod(fields.at(11)) + std::stod(fields.at(12))) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int OpenFds(pid_t pid) {
  int n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    ++n;
  return n;
}

// Opens `n` idle TCP connections to 127.0.0.1:port (the kernel completes them from the listen
// backlog whether or not the daemon accepts them).
std::vector<int> IdleConnections(int port, int n) {
  std::vector<int> fds;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ADD_FAILURE() << "connection " << i << ": " << strerror(errno);
      if (fd >= 0) close(fd);
      break;
    }
    fds.push_back(fd);
  }
  return fds;
}

// `gauntlet serve` under `ulimit -n 256`, flooded with 400 idle connections: it must neither spin
// nor flood its log, and must answer again once the connections close.
void FloodWithIdleConnections(const std::vector<std::string>& extra) {
  TempDir dir;
  std::string cmd = "ulimit -n 256 && exec '" + GauntletBin() + "' serve --db '" + dir.path() + "/g.db' --suites '" +
                    FixtureSuites() + "' --listen 127.0.0.1:0 --threads 2 --port-file '" + dir.path() + "/port'";
  for (auto& e : extra) cmd += " " + e;
  Child serve({"/bin/sh", "-c", cmd}, dir.path() + "/daemon.log");
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir.path() + "/port") || !serve.Running(); }));
  int port = 0;
  std::ifstream(dir.path() + "/port") >> port;
  ASSERT_GT(port, 0) << serve.Log();
  std::vector<int> idle = IdleConnections(port, 400);
  // The daemon takes what it can: its descriptor table fills, or it reaches its connection cap.
  int last = -1;
  ASSERT_TRUE(WaitFor([&] {
    int now = OpenFds(serve.pid());
    bool settled = now == last && now > 100;
    last = now;
    return settled;
  }, std::chrono::seconds(30)));
  const double cpu0 = CpuSeconds(serve.pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the measurement window, not a synchronisation
  const double cpu = CpuSeconds(serve.pid()) - cpu0;
  std::cerr << "daemon CPU in the 2 s window: " << cpu << " s; log: " << fs::file_size(dir.path() + "/daemon.log")
            << " bytes; descriptors open: " << OpenFds(serve.pid()) << "\n";
  // Spinning on EMFILE burns a core: ~2 s in this window. Backing off costs almost nothing.
  EXPECT_LT(cpu, 0.5) << "the daemon used " << cpu << " s of CPU in 2 s with idle connections only";
  EXPECT_LT(fs::file_size(dir.path() + "/daemon.log"), 64u * 1024) << serve.Log().substr(0, 2000);
  for (int fd : idle) close(fd);
  net::Client c("http://127.0.0.1:" + std::to_string(port), "");
  bool answered = WaitFor([&] {
    auto r = c.Send("GET", "/api/v1/health", "", "application/json", std::chrono::seconds(5));
    return r.ok() && r->status == 200;
  }, std::chrono::seconds(60));
  EXPECT_TRUE(answered) << serve.Log().substr(0, 2000);
  serve.Signal(SIGTERM);
  int st = serve.Wait(std::chrono::seconds(30));
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << serve.Log().substr(0, 2000);
}

TEST(Connections, OutOfDescriptorsTheAcceptLoopBacksOffAndRecovers) {
  // A cap above the descriptor limit: accept itself fails with EMFILE.
  FloodWithIdleConnections({"--max-connections", "100000"});
}

TEST(Connections, AtTheDefaultCapNewConnectionsWaitAndAreServedLater) {
  FloodWithIdleConnections({});
}

}  // namespace
}  // namespace gauntlet::test
