// An installed gauntlet stands alone: `cmake --install build --prefix DIR` writes DIR/bin/gauntlet and
// DIR/share/gauntlet/{web,suites}, and `DIR/bin/gauntlet serve`, started from an unrelated folder
// with no --web or --suites, serves the dashboard and loads the built-in suites from DIR, not from the
// source tree. Nothing but the install rules puts files under DIR.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "net/http_client.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string Env(const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

TEST(InstallTest, InstalledServeFindsItsDashboardAndSuitesUnderThePrefix) {
  const std::string build = Env("GAUNTLET_BUILD_DIR"), cmake = Env("GAUNTLET_CMAKE");
  ASSERT_FALSE(build.empty() || cmake.empty()) << "ctest sets GAUNTLET_BUILD_DIR and GAUNTLET_CMAKE";
  TempDir dir;
  const std::string prefix = dir.path() + "/prefix", elsewhere = dir.path() + "/elsewhere";
  fs::create_directories(elsewhere);

  Child install({cmake, "--install", build, "--prefix", prefix}, dir.path() + "/install.log");
  ASSERT_EQ(install.Wait(std::chrono::seconds(300)), 0) << install.Log();

  // The prefix holds real copies: nothing there leads back into the checkout.
  const fs::path data = fs::path(prefix) / "share/gauntlet";
  for (const fs::path p : {fs::path(prefix) / "bin/gauntlet", data / "web/index.html", data / "suites/demo-bringup.json"}) {
    EXPECT_TRUE(fs::is_regular_file(p)) << p;
    EXPECT_FALSE(fs::is_symlink(p)) << p;
  }
  EXPECT_FALSE(fs::is_symlink(data / "web"));
  EXPECT_FALSE(fs::is_symlink(data / "suites"));

  // From another folder, with the defaults: the database lands in that folder's var/.
  const std::string port_file = elsewhere + "/port";
  Child daemon({"/bin/sh", "-c",
                "cd '" + elsewhere + "' && exec '" + prefix +
                    "/bin/gauntlet' serve --listen 127.0.0.1:0 --port-file '" + port_file + "'"},
               dir.path() + "/daemon.log");
  ASSERT_TRUE(WaitFor([&] { return fs::exists(port_file) || !daemon.Running(); })) << daemon.Log();
  ASSERT_TRUE(fs::exists(port_file)) << "the installed daemon did not start:\n" << daemon.Log();
  int port = 0;
  std::ifstream(port_file) >> port;
  ASSERT_GT(port, 0);
  EXPECT_TRUE(fs::exists(elsewhere + "/var/gauntlet.db"));

  net::Client client("http://127.0.0.1:" + std::to_string(port), "");
  auto page = client.Send("GET", "/");
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_EQ(page->status, 200) << page->body;
  std::ifstream index(data / "web/index.html");
  EXPECT_EQ(page->body, std::string(std::istreambuf_iterator<char>(index), {}));

  auto suites = client.Send("GET", "/api/v1/suites");
  ASSERT_TRUE(suites.ok()) << suites.status().message();
  ASSERT_EQ(suites->status, 200) << suites->body;
  const json list = json::parse(suites->body);
  bool found = false;
  for (const auto& s : list["items"]) found = found || s.value("name", "") == "demo-bringup";
  EXPECT_TRUE(found) << "the built-in suite demo-bringup is not served: " << list.dump();
  // Loaded from the prefix, not from the checkout the binary was built in.
  auto demo = client.Send("GET", "/api/v1/suites/demo-bringup");
  ASSERT_TRUE(demo.ok()) << demo.status().message();
  ASSERT_EQ(demo->status, 200) << demo->body;
  EXPECT_EQ(json::parse(demo->body).value("source_dir", ""), fs::canonical(data / "suites").string());

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(std::chrono::seconds(30)), 0) << daemon.Log();
}

}  // namespace
}  // namespace gauntlet::test
