// The `server` stage end to end: one sweep across every mode of tests/fixtures/openai_server.py
// through a real daemon and worker on loopback. Each mode's verdict and signature, the benchmark's
// metrics, a death while starting reported at once, the server stopped afterwards and its output in
// the trial log.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <regex>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

// Crash-type modes must be judged long before this; the sweep itself is waited on for the same 60 s,
// so a stage that sat out the ready timeout cannot pass.
constexpr int kReadyTimeoutS = 60;

bool PortOpen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool open = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return open;
}

// The first capture of `re` in `text`, or "".
std::string Find(const std::string& text, const std::string& re) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(re)) ? m[1].str() : "";
}

// One sweep across every fixture mode, run once for the tests below (real servers are slow to run).
class ServerStageSweep : public ::testing::Test {
 protected:
  struct Run {
    TempDir dir;
    std::unique_ptr<Daemon> d;
    std::unique_ptr<Child> worker;
    std::map<std::string, json> by_mode;      // mode -> the trial
    std::map<std::string, std::string> logs;  // mode -> its log
  };
  static inline Run* run_ = nullptr;

  static void SetUpTestSuite() {
    run_ = new Run;
    run_->d = std::make_unique<Daemon>(run_->dir.path(), FixtureSuites());
    Daemon& d = *run_->d;
    // Several trials at once: most modes wait on nothing, and the sweep finishes sooner.
    run_->worker =
        StartWorker(run_->dir.path(), d.url(), "w", json::object(), {"--max-trials", "4", "--kill-grace-ms", "3000"});
    const std::vector<std::string> modes = {"healthy",     "crash_on_load",    "refuse_arch", "garbage",
                                            "empty",       "slow_ready",       "crash_on_request",
                                            "oom",         "nan_logprobs",     "replacement_chars"};
    // never_ready gets its own short ready timeout through the suite's {ready_timeout_s} parameter;
    // every other mode keeps 60 s, so a death while starting that waited for the timeout would show.
    json sweep = d.PostJson("/api/v1/sweeps",
                            {{"suite", "fixture-server"},
                             {"prune", false},
                             {"reuse", false},
                             {"parameters", {{"mode", modes}, {"ready_timeout_s", {std::to_string(kReadyTimeoutS)}}}},
                             {"include", {{{"mode", "never_ready"}, {"ready_timeout_s", "3"}}}}},
                            201);
    ASSERT_EQ(sweep["trials"], 11) << sweep.dump();
    json done = d.WaitSweep(sweep["id"], std::chrono::seconds(kReadyTimeoutS));
    ASSERT_TRUE(done["finished"].get<bool>()) << done.dump();
    json items = d.GetJson("/api/v1/trials?limit=100&sweep=" + sweep["id"].dump())["items"];
    for (auto& it : items) {
      json t = d.GetJson("/api/v1/trials/" + it["id"].dump());
      run_->by_mode[t["config"]["mode"]] = t;
      run_->logs[t["config"]["mode"]] = d.Get("/api/v1/trials/" + it["id"].dump() + "/log").body;
    }
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(run_->by_mode.size(), 11u) << "the sweep did not run every mode"; }
};

TEST_F(ServerStageSweep, EachModeGetsItsVerdictAndSignature) {
  auto& by_mode = run_->by_mode;
  auto& logs = run_->logs;
  auto expect = [&](const std::string& mode, const std::string& verdict, const std::string& signature) {
    const json& t = by_mode[mode];
    EXPECT_EQ(t["verdict"], verdict) << mode << ": " << t.dump() << "\n" << logs[mode];
    EXPECT_EQ(t["signature"], signature) << mode << ": " << t.dump();
    if (verdict != "passed") {
      EXPECT_EQ(t["result"]["failing_stage"], "serve") << mode;
    }
  };
  expect("healthy", "passed", "");
  expect("slow_ready", "passed", "");
  expect("crash_on_load", "crashed", "crashed:KeyError:'model.layers.<n>.self_attn.qkv_proj.weight_scale'@weight_utils.py");
  expect("refuse_arch", "unsupported",
         "unsupported:RuntimeError:FlashInfer TRTLLM-gen fused MoE is only supported on SM100 and SM103 "
         "(compute capability <n>.x), got SM90@core.py");
  expect("oom", "oom", "oom:cuda");
  expect("garbage", "wrong_output", "wrong_output:garbage:repeated_char");
  expect("empty", "wrong_output", "wrong_output:garbage:empty");
  expect("nan_logprobs", "wrong_output", "wrong_output:garbage:nan_logprobs");
  expect("replacement_chars", "wrong_output", "wrong_output:garbage:replacement_char");
  expect("never_ready", "timeout", "timeout:server_not_ready");
  expect("crash_on_request", "crashed", "crashed:illegal_memory_access");

  // A server never ready: the evidence says what its readiness probe saw last (a real HTTP answer).
  EXPECT_NE(by_mode["never_ready"]["result"]["evidence"].get<std::string>().find("; the last probe: GET /health: 503"),
            std::string::npos)
      << by_mode["never_ready"].dump();
  // The evidence carries the sample that failed, so a reader sees what the model said.
  EXPECT_NE(by_mode["garbage"]["result"]["evidence"].get<std::string>().find("!!!!"), std::string::npos);
  EXPECT_EQ(by_mode["crash_on_load"]["result"]["exit_code"], 1);

}

TEST_F(ServerStageSweep, PassedTrialsCarryTheBenchmarksNumbers) {
  auto& by_mode = run_->by_mode;
  // Passed: the benchmark's numbers per concurrency level, with units, and every request answered.
  for (const char* mode : {"healthy", "slow_ready"}) {
    const json& m = by_mode[mode]["result"]["metrics"];
    for (const char* c : {"@c1", "@c4"}) {
      for (const char* name : {"output_tok_s", "req_s", "ttft_ms_mean", "ttft_ms_p50", "ttft_ms_p99", "itl_ms_mean",
                               "itl_ms_p50", "itl_ms_p99", "errors", "client_cpu_us_per_req"})
        ASSERT_TRUE(m.contains(std::string(name) + c)) << mode << " lacks " << name << c << ": " << m.dump();
      EXPECT_GT(m[std::string("output_tok_s") + c]["value"].get<double>(), 0) << m.dump();
      EXPECT_GT(m[std::string("req_s") + c]["value"].get<double>(), 0) << m.dump();
      EXPECT_GT(m[std::string("ttft_ms_p50") + c]["value"].get<double>(), 0) << m.dump();
      EXPECT_EQ(m[std::string("errors") + c]["value"].get<double>(), 0) << m.dump();
    }
    EXPECT_EQ(m["output_tok_s@c4"]["unit"], "tok/s");
    EXPECT_EQ(m["ttft_ms_p50@c4"]["unit"], "ms");
    EXPECT_TRUE(m.contains("ready_s")) << m.dump();
  }
  // slow_ready was waited for: not ready before its one-second delay.
  EXPECT_GE(by_mode["slow_ready"]["result"]["metrics"]["ready_s"]["value"].get<double>(), 1.0);

}

TEST_F(ServerStageSweep, ADeathWhileStartingIsJudgedAtOnce) {
  auto& by_mode = run_->by_mode;
  // A process that exits while starting is judged at once, not after the 60 s ready timeout.
  for (const char* mode : {"crash_on_load", "refuse_arch", "oom"}) {
    const json& stages = by_mode[mode]["result"]["stages"];
    ASSERT_EQ(stages.size(), 1u) << by_mode[mode].dump();
    EXPECT_LT(stages[0]["seconds"].get<double>(), kReadyTimeoutS / 2.0) << mode;
  }

}

TEST_F(ServerStageSweep, EveryServerIsGoneAfterItsStageAndItsOutputIsInTheLog) {
  auto& by_mode = run_->by_mode;
  auto& logs = run_->logs;
  // Every trial's server is gone after its stage: its port refuses connections, its pid is no more,
  // and the log holds what the server printed, then the stage's end.
  for (auto& [mode, log] : logs) {
    const std::string port = Find(log, R"(server on port (\d+)\))");
    ASSERT_FALSE(port.empty()) << mode << ":\n" << log;
    EXPECT_FALSE(PortOpen(std::stoi(port))) << mode << ": port " << port << " still open";
    EXPECT_NE(log.find("server_args=ServerArgs("), std::string::npos) << mode << ":\n" << log;
    EXPECT_NE(log.find("=== stage serve ended: " + by_mode[mode]["verdict"].get<std::string>()), std::string::npos)
        << mode << ":\n" << log;
    const std::string pid = Find(log, R"(Started server process \[(\d+)\])");
    if (!pid.empty()) {
      errno = 0;
      EXPECT_EQ(kill(std::stoi(pid), 0), -1) << mode << ": server pid " << pid << " still exists";
      EXPECT_EQ(errno, ESRCH) << mode;
    }
  }
  // Servers that were listening were stopped with SIGTERM and said so (the grace period sufficed).
  for (const char* mode : {"healthy", "garbage", "never_ready", "nan_logprobs"}) {
    EXPECT_NE(logs[mode].find("Uvicorn running on http://127.0.0.1:"), std::string::npos) << mode;
    EXPECT_NE(logs[mode].find("Shutting down"), std::string::npos) << mode << ":\n" << logs[mode];
  }
  EXPECT_NE(logs["crash_on_load"].find("KeyError: 'model.layers.0.self_attn.qkv_proj.weight_scale'"), std::string::npos);
  EXPECT_NE(logs["crash_on_request"].find("an illegal memory access was encountered"), std::string::npos);
  EXPECT_NE(logs["healthy"].find("smoke[0] answered:  Paris"), std::string::npos) << logs["healthy"];
  EXPECT_NE(logs["healthy"].find("smoke[1] (chat) answered:  Paris. It is known for the Eiffel Tower."),
            std::string::npos)
      << logs["healthy"];
}

TEST(ServerStage, CancelWhileWaitingForReadyStopsTheServer) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--heartbeat-ms", "200"});
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "3000"});
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-server"}, {"parameters", {{"mode", {"never_ready"}}}}}, 201);
  const std::string tid = d.GetJson("/api/v1/trials?sweep=" + sweep["id"].dump())["items"][0]["id"].dump();
  std::string log;
  ASSERT_TRUE(WaitFor([&] {
    log = d.Get("/api/v1/trials/" + tid + "/log").body;
    return log.find("Uvicorn running on") != std::string::npos;
  }));
  d.PostJson("/api/v1/trials/" + tid + "/cancel", json::object());
  d.WaitSweep(sweep["id"], std::chrono::seconds(30));  // far less than the 60 s ready timeout
  json t = d.GetJson("/api/v1/trials/" + tid);
  EXPECT_EQ(t["verdict"], "cancelled") << t.dump();
  log = d.Get("/api/v1/trials/" + tid + "/log").body;
  const std::string port = Find(log, R"(server on port (\d+)\))");
  ASSERT_FALSE(port.empty()) << log;
  EXPECT_FALSE(PortOpen(std::stoi(port)));
  EXPECT_NE(log.find("Shutting down"), std::string::npos) << log;
}

}  // namespace
}  // namespace gauntlet::test
