// No process outlives its stage (issue 19): real processes, each leaving a grandchild that ignores
// SIGTERM behind by one escape route (tests/fixtures/containment/escape.sh: setsid, double fork,
// env -i), and each stage ending one way (normal end, timeout, cancel), under each containment the
// worker has (a cgroup where the host allows it; the subreaper keeper alone). Before the keeper, a
// setsid or env -i grandchild survived all three ends (the stop reached the process group only).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "workers/gpu_handback.h"
#include "proc/process.h"
#include "proc/stage_cgroup.h"

namespace gauntlet {
using proc::Containment;
using proc::ExitInfoProc;
using proc::Process;
using proc::ProcessSpec;
using proc::SetContainment;
using proc::StageCgroup;
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string Script() { return std::string(GAUNTLET_SOURCE_DIR) + "/tests/fixtures/containment/escape.sh"; }

struct Dir {
  Dir() {
    char tmpl[] = "/tmp/gauntlet-containment-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { fs::remove_all(path); }
  std::string path;
};

pid_t ReadPid(const std::string& file) {
  pid_t p = 0;
  std::ifstream(file) >> p;
  return p;
}

// Gone for good: not even a zombie waiting for its parent.
bool Gone(pid_t p) { return kill(p, 0) != 0 && errno == ESRCH; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

enum class End { kNormal, kTimeout, kCancel };

struct Case {
  Containment mode;
  std::string route;
  End end;
  bool view = false;  // in its own mount and PID namespaces, under their init (proc/stage_init.h)
};

std::string Name(const testing::TestParamInfo<Case>& i) {
  const char* ends[] = {"NormalEnd", "Timeout", "Cancel"};
  return std::string(i.param.mode == Containment::kAuto ? "Cgroup" : "Subreaper") + (i.param.view ? "View" : "") + "_" +
         i.param.route + "_" + ends[static_cast<int>(i.param.end)];
}

// Processes whose command line is exactly `argv` (NUL-separated), as the host's /proc shows them.
int CountWithCmdline(const std::string& cmdline) {
  int n = 0;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && isdigit(static_cast<unsigned char>(name[0])) && ReadFile(e.path().string() + "/cmdline") == cmdline) ++n;
  }
  return n;
}

class Containment_ : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    SetContainment(GetParam().mode);
    if (GetParam().mode == Containment::kAuto && !StageCgroup::Available())
      GTEST_SKIP() << "SKIP: this host gives no cgroup v2 with cgroup.kill to create (the subreaper cases still run)";
    if (GetParam().view && geteuid() != 0) GTEST_SKIP() << "SKIP: a process's own namespaces need root";
  }
  void TearDown() override { SetContainment(Containment::kAuto); }
};

TEST_P(Containment_, NoGrandchildOutlivesItsStage) {
  const Case& c = GetParam();
  Dir dir;
  const std::string pidfile = dir.path + "/gc.pid";
  ProcessSpec spec;
  spec.argv = {"/bin/sh", Script(), c.route, pidfile, c.end == End::kNormal ? "normal" : "hang"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.cwd = dir.path;
  // The grandchild's sleep, unique to this case: in its own PID namespace the pid it writes is not
  // the host's, so it is found by its command line.
  static int seq = 0;
  const std::string secs = "300." + std::to_string(getpid()) + std::to_string(++seq);
  spec.argv.push_back(secs);
  if (c.view) spec.view = proc::OwnView{};
  auto p = Process::Start(spec);
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::string out;
  pid_t gc = 0;
  auto look = [&] {
    if (gc == 0) gc = ReadPid(pidfile);
    return gc > 0;
  };
  const auto deadline = Clock::now() + (c.end == End::kTimeout ? milliseconds(1500) : std::chrono::seconds(30));
  ExitInfoProc e = (*p)->Run(
      deadline, [&](std::string_view s) { out.append(s); },
      [&] { return look() && c.end == End::kCancel; }, milliseconds(200), milliseconds(20));
  look();
  ASSERT_GT(gc, 0) << "the grandchild never started: " << out;
  if (c.view) EXPECT_GT(gc, 2) << "the grandchild took its namespace's init's or leader's pid";
  else EXPECT_TRUE(Gone(gc)) << "grandchild " << gc << " (" << c.route << ") outlived its stage";
  EXPECT_EQ(CountWithCmdline("sleep" + std::string(1, '\0') + secs + std::string(1, '\0')), 0)
      << "the grandchild (" << c.route << ") outlived its stage";
  // The grandchild wrote its own cgroup before its pid: it was born inside the stage's.
  const std::string gc_cgroup = ReadFile(pidfile + ".cgroup");
  if (c.mode == Containment::kAuto) EXPECT_NE(gc_cgroup.find("/gauntlet-stage-"), std::string::npos) << gc_cgroup;
  switch (c.end) {
    case End::kNormal:
      EXPECT_EQ(e.exit_code, 0) << out;
      EXPECT_FALSE(e.timed_out || e.stopped);
      EXPECT_NE(out.find("up"), std::string::npos) << out;
      break;
    case End::kTimeout: EXPECT_TRUE(e.timed_out); break;
    case End::kCancel: EXPECT_TRUE(e.stopped); break;
  }
}

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (bool view : {false, true})
    for (Containment m : {Containment::kAuto, Containment::kSubreaper})
      for (const char* r : {"setsid", "double_fork", "env_i"})
        for (End e : {End::kNormal, End::kTimeout, End::kCancel}) out.push_back({m, r, e, view});
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryRouteEveryEnd, Containment_, testing::ValuesIn(AllCases()), Name);

// The keeper itself SIGKILLed (the OOM killer's choice, say): its leader dies with it (PDEATHSIG),
// and the orphan it had taken in goes to the next subreaper up, the worker, whose sweep of stray
// children (children no Process started) kills it when the Process ends.
TEST(Containment, AKilledKeepersOrphansAreSweptByTheWorker) {
  SetContainment(Containment::kSubreaper);
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // as RunWorker does
  Dir dir;
  const std::string pidfile = dir.path + "/gc.pid";
  ProcessSpec spec;
  spec.argv = {"/bin/sh", Script(), "setsid", pidfile, "hang"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  auto p = Process::Start(spec);
  ASSERT_TRUE(p.ok());
  pid_t gc = 0;
  bool killed = false;
  ExitInfoProc e = (*p)->Run(
      Clock::now() + std::chrono::seconds(30), [](std::string_view) {},
      [&] {
        if (!killed && (gc = ReadPid(pidfile)) > 0) {
          kill((*p)->pid(), SIGKILL);  // the keeper
          killed = true;
        }
        return false;
      },
      milliseconds(200), milliseconds(20));
  ASSERT_GT(gc, 0);
  EXPECT_EQ(e.signal, SIGKILL);
  EXPECT_TRUE(Gone(gc)) << "the orphan of a killed keeper survived";
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  SetContainment(Containment::kAuto);
}

// The worker's sweep of stray children runs only when a keeper has ended in a way that may have
// left orphans to the worker (any end but exit 0): a keeper that exits 0 had no child left. A
// child of the test that no Process started stands for a stray: after a stage whose keeper ended
// cleanly the sweep leaves it (it looks for nothing), after a killed keeper it kills it. Before,
// the sweep read a file per worker thread three times per trial (issue 31).
TEST(Containment, StrayChildrenAreSweptOnlyAfterAKeeperEndedUntidily) {
  SetContainment(Containment::kSubreaper);
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // as RunWorker does
  proc::KillStrayChildren();  // the first sweep always runs: start from a clean slate
  pid_t stray = fork();
  ASSERT_GE(stray, 0);
  if (stray == 0) {
    execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
    _exit(127);
  }
  ProcessSpec spec;
  spec.argv = {"/bin/true"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  {
    auto p = Process::Start(spec);
    ASSERT_TRUE(p.ok());
    ExitInfoProc e = (*p)->Run(Clock::now() + std::chrono::seconds(30), [](std::string_view) {}, nullptr,
                               milliseconds(200), milliseconds(20));
    EXPECT_EQ(e.exit_code, 0);
  }
  EXPECT_EQ(proc::KillStrayChildren(), 0);
  EXPECT_EQ(waitpid(stray, nullptr, WNOHANG), 0) << "swept after a keeper that ended cleanly";
  spec.argv = {"/bin/sleep", "300"};
  {
    auto p = Process::Start(spec);
    ASSERT_TRUE(p.ok());
    kill((*p)->pid(), SIGKILL);  // the keeper, killed: its stage may have left orphans here
    ExitInfoProc e = (*p)->Run(Clock::now() + std::chrono::seconds(30), [](std::string_view) {}, nullptr,
                               milliseconds(200), milliseconds(20));
    EXPECT_EQ(e.signal, SIGKILL);
  }
  EXPECT_TRUE(Gone(stray)) << "the sweep after a killed keeper left a stray child";
  if (!Gone(stray)) {
    kill(stray, SIGKILL);
    waitpid(stray, nullptr, 0);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  SetContainment(Containment::kAuto);
}

// The worker SIGKILLed mid-stage: the keeper sees its parent change and kills the whole stage,
// setsid grandchild included (before: the leader died of PDEATHSIG and the grandchild stayed until
// a later worker start swept it by an environment variable that env -i removes).
TEST(Containment, AStageEndsWhenItsWorkerIsKilled) {
  for (Containment m : {Containment::kAuto, Containment::kSubreaper}) {
    if (m == Containment::kAuto && !StageCgroup::Available()) continue;
    Dir dir;
    const std::string pidfile = dir.path + "/gc.pid";
    pid_t worker = fork();
    ASSERT_GE(worker, 0);
    if (worker == 0) {
      SetContainment(m);
      ProcessSpec spec;
      spec.argv = {"/bin/sh", Script(), "env_i", pidfile, "hang"};
      spec.env = {{"PATH", "/usr/bin:/bin"}};
      auto p = Process::Start(spec);
      if (!p.ok()) _exit(3);
      (*p)->Run(Clock::now() + std::chrono::seconds(60), [](std::string_view) {}, nullptr, milliseconds(200),
                milliseconds(20));
      _exit(0);
    }
    pid_t gc = 0;
    const auto until = Clock::now() + std::chrono::seconds(20);
    while ((gc = ReadPid(pidfile)) <= 0 && Clock::now() < until) std::this_thread::sleep_for(milliseconds(20));
    ASSERT_GT(gc, 0);
    kill(worker, SIGKILL);
    waitpid(worker, nullptr, 0);
    bool gone = false;
    while (!(gone = Gone(gc)) && Clock::now() < until) std::this_thread::sleep_for(milliseconds(20));
    EXPECT_TRUE(gone) << "grandchild " << gc << " outlived its killed worker";
  }
}

// A GPU whose NVML list names the pids it is given while they live (reaping them: the test is
// their parent). The fixture of HandBackGpus's seam.
class FakeGpus final : public worker::GpuProbe {
 public:
  std::map<int, pid_t> on;
  std::optional<std::vector<unsigned>> Pids(int index) const override {
    std::vector<unsigned> out;
    auto it = on.find(index);
    if (it != on.end() && waitpid(it->second, nullptr, WNOHANG) == 0) out.push_back(static_cast<unsigned>(it->second));
    return out;
  }
};

pid_t Spawn(std::vector<std::string> env) {
  std::vector<char*> argv = {const_cast<char*>("/bin/sleep"), const_cast<char*>("300"), nullptr};
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, "/bin/sleep", nullptr, nullptr, argv.data(), envp.data()), 0);
  return pid;
}

// After a trial: a leftover of this worker's trials on a GPU (marked by its trial folder, as one an
// earlier run of the worker left) is killed and the GPU goes back; a process that is not the
// worker's is never killed, and its GPU is held back, naming it.
TEST(GpuHandback, OwnLeftoversAreKilledOthersHoldTheGpuBack) {
  Dir dir;
  const std::string workdir = dir.path + "/work";
  pid_t ours = Spawn({"PATH=/usr/bin:/bin", "GAUNTLET_WORKDIR=" + workdir + "/trial-7-a1"});
  pid_t foreign = Spawn({"PATH=/usr/bin:/bin"});
  FakeGpus gpus;
  gpus.on = {{0, ours}, {1, foreign}};
  auto held = worker::HandBackGpus(gpus, {0, 1}, workdir, milliseconds(3000));
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].index, 1);
  EXPECT_NE(held[0].reason.find(std::to_string(foreign) + " (sleep)"), std::string::npos) << held[0].reason;
  EXPECT_EQ(held[0].pids, std::vector<unsigned>{static_cast<unsigned>(foreign)});
  EXPECT_TRUE(Gone(ours));
  EXPECT_EQ(kill(foreign, 0), 0) << "a process that is not the worker's was killed";
  kill(foreign, SIGKILL);
  waitpid(foreign, nullptr, 0);
  EXPECT_TRUE(worker::HandBackGpus(gpus, {0, 1}, workdir, milliseconds(100)).empty());
}

}  // namespace
}  // namespace gauntlet
