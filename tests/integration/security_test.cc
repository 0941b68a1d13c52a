// Who may do what (issue 19): a worker acts only for the node it registered, through the
// credential its registration returned; a live node's name is not taken over; quarantine is an
// admin's (or the node's own) call. Real daemon and worker processes on loopback.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "http/auth.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

// One call with `token`; the test fails if the daemon cannot be reached.
net::ClientResponse Call(const Daemon& d, const std::string& method, const std::string& target,
                          const std::string& token, const std::string& body = "{}") {
  net::Client c(d.url(), token);
  auto r = c.Send(method, target, body);
  EXPECT_TRUE(r.ok()) << method << " " << target << ": " << r.status().message();
  return r.ok() ? *r : net::ClientResponse{};
}

json Body(const net::ClientResponse& r) { return json::parse(r.body, nullptr, false); }

std::string TokensFile(const TempDir& dir) {
  std::ofstream(dir.path() + "/tokens") << "worker sha256:" << http::Sha256Hex("fleet-token") << "\n"
                                        << "admin sha256:" << http::Sha256Hex("boss") << "\n";
  return dir.path() + "/tokens";
}

TEST(NodeAccess, AWorkerCredentialActsOnlyForItsOwnNode) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--tokens", TokensFile(dir)});
  auto reg_a = Call(d, "POST", "/api/v1/nodes/register", "fleet-token",
                    json{{"name", "a"}, {"inventory", json::object()}}.dump());
  auto reg_b = Call(d, "POST", "/api/v1/nodes/register", "fleet-token",
                    json{{"name", "b"}, {"inventory", json::object()}}.dump());
  ASSERT_EQ(reg_a.status, 200) << reg_a.body;
  ASSERT_EQ(reg_b.status, 200) << reg_b.body;
  const std::string a = Body(reg_a)["node"].dump(), b = Body(reg_b)["node"].dump();
  const std::string cred_a = Body(reg_a)["node_token"], cred_b = Body(reg_b)["node_token"];
  EXPECT_NE(cred_a, cred_b);

  auto sweep = Call(d, "POST", "/api/v1/sweeps", "boss",
                    json{{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}.dump());
  ASSERT_EQ(sweep.status, 201) << sweep.body;
  // The fleet's shared worker token may register, but not lease for a node: that takes the node's
  // own credential, and another node's credential is refused too.
  EXPECT_EQ(Call(d, "POST", "/api/v1/nodes/" + a + "/lease", "fleet-token", R"({"wait_s":0})").status, 403);
  EXPECT_EQ(Call(d, "POST", "/api/v1/nodes/" + a + "/lease", cred_b, R"({"wait_s":0})").status, 403);
  auto grant = Call(d, "POST", "/api/v1/nodes/" + a + "/lease", cred_a, R"({"wait_s":0})");
  ASSERT_EQ(grant.status, 200) << grant.body;
  const std::string lease = Body(grant)["lease"], trial = Body(grant)["trial"].dump();

  // Node b (or the shared token) cannot keep, feed, finish or quarantine node a's work.
  for (const std::string& who : {cred_b, std::string("fleet-token")}) {
    EXPECT_EQ(Call(d, "POST", "/api/v1/leases/" + lease + "/heartbeat", who).status, 403) << who;
    EXPECT_EQ(Call(d, "POST", "/api/v1/leases/" + lease + "/log?offset=0", who, "forged").status, 403) << who;
    EXPECT_EQ(Call(d, "POST", "/api/v1/leases/" + lease + "/result", who, R"({"verdict":"crashed"})").status, 403)
        << who;
    EXPECT_EQ(Call(d, "POST", "/api/v1/nodes/" + a + "/quarantine", who, R"({"reason":"x"})").status, 403) << who;
  }
  // Node a's own credential does all of it, and the result is the one it sent.
  EXPECT_EQ(Call(d, "POST", "/api/v1/leases/" + lease + "/heartbeat", cred_a, R"({"running":true})").status, 200);
  EXPECT_EQ(Call(d, "POST", "/api/v1/leases/" + lease + "/log?offset=0", cred_a, "real").status, 200);
  EXPECT_EQ(Call(d, "POST", "/api/v1/leases/" + lease + "/result", cred_a, R"({"verdict":"passed"})").status, 200);
  json t = Body(Call(d, "GET", "/api/v1/trials/" + trial, "boss"));
  EXPECT_EQ(t["verdict"], "passed") << t.dump();
  EXPECT_EQ(Call(d, "GET", "/api/v1/trials/" + trial + "/log", "boss").body, "real");

  // Quarantine: the admin's call for any node, the node's own for itself (its preflight failed).
  EXPECT_EQ(Call(d, "POST", "/api/v1/nodes/" + b + "/quarantine", "boss", R"({"reason":"bad fan"})").status, 200);
  EXPECT_EQ(Call(d, "POST", "/api/v1/nodes/" + a + "/quarantine", cred_a, R"({"reason":"preflight"})").status, 200);
}

TEST(NodeAccess, ALiveNodesNameIsNotTakenOver) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--tokens", TokensFile(dir)});
  const json gpu = {{"gpus", {{{"index", 0}, {"name", "NVIDIA H200"}, {"uuid", "GPU-1"}, {"compute_capability", "9.0"},
                               {"memory_mb", 143771}}}}};
  auto first = Call(d, "POST", "/api/v1/nodes/register", "fleet-token", json{{"name", "n"}, {"inventory", gpu}}.dump());
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string cred = Body(first)["node_token"];
  // Someone else with the fleet's token claims the name with another inventory: refused, nothing changed.
  auto thief = Call(d, "POST", "/api/v1/nodes/register", "fleet-token",
                    json{{"name", "n"}, {"inventory", json::object()}}.dump());
  EXPECT_EQ(thief.status, 409) << thief.body;
  EXPECT_EQ(Body(thief)["field"], "name");
  auto forged = Call(d, "POST", "/api/v1/nodes/register", "fleet-token",
                     json{{"name", "n"}, {"inventory", json::object()}, {"node_token", "gn_guess"}}.dump());
  EXPECT_EQ(forged.status, 409) << forged.body;
  json nodes = Body(Call(d, "GET", "/api/v1/nodes", "boss"));
  ASSERT_EQ(nodes["items"].size(), 1u);
  EXPECT_EQ(nodes["items"][0]["hardware"], "NVIDIA H200 · sm_90 · x1") << nodes.dump();
  EXPECT_EQ(nodes.dump().find(http::Sha256Hex(cred)), std::string::npos) << "the credential's hash is never served";
  // The node itself (a restarted worker holding its credential) re-registers and keeps it.
  auto again = Call(d, "POST", "/api/v1/nodes/register", "fleet-token",
                    json{{"name", "n"}, {"inventory", gpu}, {"node_token", cred}}.dump());
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Body(again)["node"], Body(first)["node"]);
  EXPECT_EQ(Body(again)["node_token"], cred);
}

TEST(NodeAccess, ARealWorkerKeepsItsCredentialAcrossARestart) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--tokens", TokensFile(dir)});
  auto run_one = [&](const std::string& mode) {
    auto s = Call(d, "POST", "/api/v1/sweeps", "boss",
                  json{{"suite", "fixture-cmd"}, {"parameters", {{"mode", {mode}}}}}.dump());
    EXPECT_EQ(s.status, 201) << s.body;
    const std::string id = Body(s)["id"].dump();
    json last;
    bool done = WaitFor([&] {
      last = Body(Call(d, "GET", "/api/v1/sweeps/" + id, "boss"));
      return last.is_object() && last.value("finished", false);
    }, std::chrono::seconds(60));
    EXPECT_TRUE(done) << last.dump();
    return last;
  };
  {
    auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--token", "fleet-token"});
    EXPECT_EQ(run_one("pass")["by_verdict"]["passed"], 1) << w->Log();
    w->Signal(SIGTERM);
    EXPECT_EQ(w->Wait(std::chrono::seconds(30)), 0) << w->Log();
  }
  // The credential is kept in the workdir, readable by the worker's user alone.
  const std::string file = dir.path() + "/work-w/node-credential.json";
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(fs::status(file).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
  // Restarted at once (its node still live), the worker is the node it was, not a thief.
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--token", "fleet-token"});
  EXPECT_EQ(run_one("pass")["by_verdict"]["passed"], 1) << w->Log();
  EXPECT_EQ(Body(Call(d, "GET", "/api/v1/nodes", "boss"))["items"].size(), 1u);
}

// A self-signed certificate (its own CA) for `san` ("DNS:localhost"), written as PEM to
// dir/cert.pem and dir/key.pem with OpenSSL's C API: no openssl command needed.
void MakeCertificate(const std::string& dir, const std::string& san) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  ASSERT_NE(key, nullptr);
  X509* x = X509_new();
  ASSERT_EQ(X509_set_version(x, 2), 1);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("gauntlet-test"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, san.c_str()}, std::pair{NID_basic_constraints, "critical,CA:TRUE"},
                            std::pair{NID_key_usage, "critical,digitalSignature,keyCertSign"},
                            std::pair{NID_ext_key_usage, "serverAuth"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    ASSERT_NE(ext, nullptr);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  ASSERT_GT(X509_sign(x, key, EVP_sha256()), 0);
  FILE* c = fopen((dir + "/cert.pem").c_str(), "w");
  FILE* k = fopen((dir + "/key.pem").c_str(), "w");
  ASSERT_TRUE(c && k);
  PEM_write_X509(c, x);
  PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr);
  fclose(c);
  fclose(k);
  X509_free(x);
  EVP_PKEY_free(key);
}

struct CaFileScope {  // the clients made in a test trust `path`; the system's store again after
  explicit CaFileScope(const std::string& path) { net::SetDefaultCaFile(path); }
  ~CaFileScope() { net::SetDefaultCaFile(""); }
};

TEST(Tls, TheDaemonServesHttpsAndClientsVerifyIt) {
  TempDir dir;
  MakeCertificate(dir.path(), "DNS:localhost");
  const std::string cert = dir.path() + "/cert.pem";
  Daemon d(dir.path(), FixtureSuites(), {"--tls-cert", cert, "--tls-key", dir.path() + "/key.pem"});
  const std::string https = "https://localhost:" + std::to_string(d.port());
  {
    CaFileScope trust(cert);
    net::Client ok(https, "");
    auto r = ok.Send("GET", "/api/v1/sweeps");
    ASSERT_TRUE(r.ok()) << r.status().message() << d.Log();
    EXPECT_EQ(r->status, 200);
    // The certificate names localhost, not 127.0.0.1: the host name is checked, not only the chain.
    net::Client wrong_name("https://127.0.0.1:" + std::to_string(d.port()), "");
    EXPECT_FALSE(wrong_name.Send("GET", "/api/v1/sweeps").ok());
  }
  // Not trusted by the system's store: refused, with a hint at --ca-file.
  net::Client untrusted(https, "");
  auto r = untrusted.Send("GET", "/api/v1/sweeps");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--ca-file"), std::string::npos) << r.status().message();
  // Plain HTTP to the HTTPS port gets no answer served in clear text.
  net::Client plain("http://127.0.0.1:" + std::to_string(d.port()), "");
  auto p = plain.Send("GET", "/api/v1/sweeps");
  EXPECT_TRUE(!p.ok() || p->status != 200);

  // The worker and the CLI speak https:// and verify the daemon against --ca-file.
  auto w = StartWorker(dir.path(), https, "tls-worker", json::object(), {"--ca-file", cert});
  const std::string file = dir.Write("sweep.json", R"({"suite": "fixture-cmd", "parameters": {"mode": ["pass"]}})");
  Child submit({GauntletBin(), "submit", "--server", https, "--ca-file", cert, file, "--wait", "--wait-for-nodes"},
               dir.path() + "/submit.log");
  int st = submit.Wait(std::chrono::seconds(60));
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << submit.Log() << w->Log();
  CaFileScope trust(cert);
  net::Client c(https, "");
  auto sweeps = c.Send("GET", "/api/v1/sweeps");
  ASSERT_TRUE(sweeps.ok());
  json items = Body(*sweeps)["items"];
  ASSERT_EQ(items.size(), 1u) << sweeps->body;
  auto one = c.Send("GET", "/api/v1/sweeps/" + items[0]["id"].dump());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Body(*one)["by_verdict"]["passed"], 1) << one->body << w->Log();
}

TEST(Tls, ANonLoopbackListenWithoutTlsWarnsOfClearText) {
  TempDir dir;
  Child serve({GauntletBin(), "serve", "--db", dir.path() + "/g.db", "--suites", FixtureSuites(), "--listen", "0.0.0.0:0",
               "--insecure", "--port-file", dir.path() + "/port"},
              dir.path() + "/log");
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir.path() + "/port") || !serve.Running(); }));
  serve.Signal(SIGTERM);
  serve.Wait(std::chrono::seconds(30));
  EXPECT_NE(serve.Log().find("clear text"), std::string::npos) << serve.Log();
  MakeCertificate(dir.path(), "DNS:localhost");
  Child bad({GauntletBin(), "serve", "--db", dir.path() + "/h.db", "--suites", FixtureSuites(), "--listen", "127.0.0.1:0",
             "--tls-cert", dir.path() + "/cert.pem", "--tls-key", dir.path() + "/missing.pem"},
            dir.path() + "/bad.log");
  int st = bad.Wait(std::chrono::seconds(30));
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << bad.Log();
  EXPECT_NE(bad.Log().find("missing.pem"), std::string::npos) << bad.Log();
}

}  // namespace
}  // namespace gauntlet::test
