// deploy/: every Kubernetes manifest parses, and names, ports, labels, selectors and Secret keys
// agree with each other; every flag the manifests, units and container recipes pass exists in
// `gauntlet serve --help` / `gauntlet worker --help`; the systemd units pass `systemd-analyze
// verify` (where systemd is installed); the Slurm example config parses.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "slurm/slurm.h"
#include "core/yaml_json.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
namespace fs = std::filesystem;

std::string Deploy() { return SourceDir() + "/deploy"; }

std::string Shell(const std::string& cmd, int* code = nullptr) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while (f && (n = fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  int st = f ? pclose(f) : -1;
  if (code) *code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The flags a subcommand accepts, from its --help.
std::set<std::string> Flags(const std::string& sub) {
  std::set<std::string> out;
  const std::string help = Shell(GauntletBin() + " " + sub + " --help");
  std::regex re("--[a-z][a-z0-9-]*");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), re); it != std::sregex_iterator(); ++it)
    out.insert(it->str());
  return out;
}

// Flags used in a command line or argument list, e.g. "--db".
std::set<std::string> FlagsIn(const std::string& text) {
  std::set<std::string> out;
  std::regex re("(^|[\\s\"'\\[,])(--[a-z][a-z0-9-]*)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[2].str());
  return out;
}

void ExpectFlagsExist(const std::string& where, const std::string& text, const std::set<std::string>& known) {
  for (auto& f : FlagsIn(text)) EXPECT_TRUE(known.count(f)) << where << " uses " << f << ", which the command lacks";
}

class Manifests : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& f : fs::directory_iterator(Deploy() + "/kubernetes")) {
      if (f.path().extension() != ".yaml") continue;
      files.insert(f.path().filename().string());
      if (f.path().filename() == "kustomization.yaml") continue;  // kustomize's, not an object
      for (auto& doc : YAML::LoadAllFromFile(f.path().string())) {
        ASSERT_TRUE(doc["kind"] && doc["metadata"]["name"]) << f.path();
        docs[doc["kind"].as<std::string>() + "/" + doc["metadata"]["name"].as<std::string>()] = doc;
      }
    }
  }
  YAML::Node Get(const std::string& key) {
    EXPECT_TRUE(docs.count(key)) << "no " << key << " in deploy/kubernetes";
    return docs.count(key) ? docs[key] : YAML::Node();
  }
  std::map<std::string, YAML::Node> docs;
  std::set<std::string> files;
};

std::string ArgsText(const YAML::Node& c) {
  std::string s;
  for (const char* k : {"command", "args"})
    if (c[k])
      for (auto a : c[k]) s += " " + a.as<std::string>();
  return s;
}

TEST_F(Manifests, KustomizationListsEveryManifestAndOnlyThose) {
  YAML::Node k = YAML::LoadFile(Deploy() + "/kubernetes/kustomization.yaml");
  std::set<std::string> listed;
  for (auto r : k["resources"]) listed.insert(r.as<std::string>());
  std::set<std::string> want = files;
  want.erase("kustomization.yaml");
  EXPECT_EQ(listed, want);
}

TEST_F(Manifests, DaemonServiceStatefulSetVolumeAndProbesAgree) {
  YAML::Node svc = Get("Service/gauntlet"), sts = Get("StatefulSet/gauntlet");
  ASSERT_TRUE(svc && sts);
  EXPECT_EQ(sts["spec"]["serviceName"].as<std::string>(), "gauntlet");
  EXPECT_EQ(sts["spec"]["replicas"].as<int>(), 1) << "one process owns the SQLite file";
  // Selector <-> pod labels, both ways that matter.
  YAML::Node pod_labels = sts["spec"]["template"]["metadata"]["labels"];
  for (auto kv : svc["spec"]["selector"])
    EXPECT_EQ(pod_labels[kv.first.as<std::string>()].as<std::string>(""), kv.second.as<std::string>());
  for (auto kv : sts["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(pod_labels[kv.first.as<std::string>()].as<std::string>(""), kv.second.as<std::string>());
  YAML::Node c = sts["spec"]["template"]["spec"]["containers"][0];
  const std::string args = ArgsText(c);
  ExpectFlagsExist("StatefulSet/gauntlet", args, Flags("serve"));
  // --listen's port is the container port the Service targets (by name).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(args, m, std::regex("--listen (\\S+):(\\d+)"))) << args;
  EXPECT_EQ(m[1].str(), "0.0.0.0");
  const int port = std::stoi(m[2].str());
  std::string port_name;
  for (auto p : c["ports"])
    if (p["containerPort"].as<int>() == port) port_name = p["name"].as<std::string>();
  ASSERT_FALSE(port_name.empty()) << "no containerPort " << port;
  EXPECT_EQ(svc["spec"]["ports"][0]["targetPort"].as<std::string>(), port_name);
  // Probes reach /api/v1/health on that port.
  for (const char* probe : {"readinessProbe", "livenessProbe"}) {
    ASSERT_TRUE(c[probe]) << probe;
    std::string text = YAML::Dump(c[probe]);
    EXPECT_NE(text.find("/api/v1/health"), std::string::npos) << probe;
    EXPECT_NE(text.find(":" + std::to_string(port) + "/"), std::string::npos) << probe;
  }
  // --db lives on the persistent volume; --tokens on the Secret's mount.
  std::map<std::string, std::string> mounts;  // volume -> path
  for (auto v : c["volumeMounts"]) mounts[v["name"].as<std::string>()] = v["mountPath"].as<std::string>();
  ASSERT_TRUE(std::regex_search(args, m, std::regex("--db (\\S+)")));
  const std::string claim = sts["spec"]["volumeClaimTemplates"][0]["metadata"]["name"].as<std::string>();
  ASSERT_TRUE(mounts.count(claim)) << "the PVC " << claim << " is not mounted";
  EXPECT_EQ(m[1].str().rfind(mounts[claim] + "/", 0), 0u) << m[1] << " is not on the volume";
  ASSERT_TRUE(std::regex_search(args, m, std::regex("--tokens (\\S+)")));
  bool tokens_from_secret = false;
  for (auto v : sts["spec"]["template"]["spec"]["volumes"])
    if (v["secret"] && mounts.count(v["name"].as<std::string>()))
      for (auto item : v["secret"]["items"])
        if (mounts[v["name"].as<std::string>()] + "/" + item["path"].as<std::string>() == m[1].str())
          tokens_from_secret = true;
  EXPECT_TRUE(tokens_from_secret) << "--tokens " << m[1] << " is not a mounted Secret item";
}

TEST_F(Manifests, EverySecretKeyReferencedExists) {
  YAML::Node secret = Get("Secret/gauntlet-tokens");
  ASSERT_TRUE(secret);
  std::set<std::string> keys;
  for (auto kv : secret["stringData"]) keys.insert(kv.first.as<std::string>());
  int refs = 0;
  std::function<void(const YAML::Node&)> walk = [&](const YAML::Node& n) {
    if (n.IsMap()) {
      if (n["secretKeyRef"]) {
        EXPECT_EQ(n["secretKeyRef"]["name"].as<std::string>(), "gauntlet-tokens");
        EXPECT_TRUE(keys.count(n["secretKeyRef"]["key"].as<std::string>())) << n["secretKeyRef"]["key"];
        ++refs;
      }
      if (n["secret"] && n["secret"]["secretName"]) {
        EXPECT_EQ(n["secret"]["secretName"].as<std::string>(), "gauntlet-tokens");
        for (auto item : n["secret"]["items"]) EXPECT_TRUE(keys.count(item["key"].as<std::string>()));
        ++refs;
      }
      for (auto kv : n) walk(kv.second);
    } else if (n.IsSequence()) {
      for (auto x : n) walk(x);
    }
  };
  for (auto& [k, d] : docs) walk(d);
  EXPECT_GE(refs, 3);  // daemon tokens file, its probe token, the workers' token
  // Every tokens-file line is ROLE sha256:HEX [NAME].
  std::istringstream lines(secret["stringData"]["tokens"].as<std::string>());
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty())
      EXPECT_TRUE(std::regex_match(line, std::regex("(read|submit|worker|admin) sha256:[0-9a-f]{64}( \\S+)?"))) << line;
}

TEST_F(Manifests, WorkersRunOnGpuNodesWithTheirGpusTheServiceAndNodeLabels) {
  YAML::Node ds = Get("DaemonSet/gauntlet-worker"), svc = Get("Service/gauntlet");
  ASSERT_TRUE(ds && svc);
  YAML::Node spec = ds["spec"]["template"]["spec"];
  for (auto kv : ds["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(ds["spec"]["template"]["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>(""),
              kv.second.as<std::string>());
  EXPECT_EQ(spec["nodeSelector"]["nvidia.com/gpu.present"].as<std::string>(), "true");
  YAML::Node c = spec["containers"][0];
  EXPECT_GT(c["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 0);
  const std::string args = ArgsText(c);
  ExpectFlagsExist("DaemonSet/gauntlet-worker", args, Flags("worker"));
  // The worker's --server is the daemon Service, by name, namespace and port.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(args, m, std::regex("--server http://([a-z0-9-]+)\\.([a-z0-9-]+)\\.svc:(\\d+)"))) << args;
  EXPECT_EQ(m[1].str(), svc["metadata"]["name"].as<std::string>());
  YAML::Node kust = YAML::LoadFile(Deploy() + "/kubernetes/kustomization.yaml");
  EXPECT_EQ(m[2].str(), kust["namespace"].as<std::string>());
  EXPECT_EQ(std::stoi(m[3].str()), svc["spec"]["ports"][0]["port"].as<int>());
  // GPU feature discovery labels become --labels: the init step writes the file the worker reads.
  YAML::Node init = spec["initContainers"][0];
  YAML::Node cm = Get("ConfigMap/gauntlet-worker-labels");
  ASSERT_TRUE(cm);
  const std::string script = cm["data"]["node-labels.py"].as<std::string>();
  EXPECT_NE(script.find("nvidia.com/gpu.product"), std::string::npos);
  EXPECT_NE(ArgsText(init).find("node-labels.py"), std::string::npos);
  std::smatch out;
  ASSERT_TRUE(std::regex_search(script, out, std::regex("open\\(\"([^\"]+)\", \"w\"\\)")));
  EXPECT_NE(args.find("--labels \"$(cat " + out[1].str() + ")\""), std::string::npos) << args;
  // ... through the same volume, and the node name comes from the downward API.
  std::map<std::string, std::string> init_mounts, main_mounts;
  for (auto v : init["volumeMounts"]) init_mounts[v["name"].as<std::string>()] = v["mountPath"].as<std::string>();
  for (auto v : c["volumeMounts"]) main_mounts[v["name"].as<std::string>()] = v["mountPath"].as<std::string>();
  const std::string dir = fs::path(out[1].str()).parent_path().string();
  bool shared = false;
  for (auto& [name, path] : init_mounts) shared = shared || (path == dir && main_mounts[name] == dir);
  EXPECT_TRUE(shared) << "the labels file's folder is not one volume in both containers";
  for (auto& [name, path] : init_mounts) {
    if (name == "labels") continue;
    bool found = false;
    for (auto v : spec["volumes"])
      if (v["name"].as<std::string>() == name && v["configMap"])
        found = v["configMap"]["name"].as<std::string>() == "gauntlet-worker-labels";
    if (path == "/etc/gauntlet") EXPECT_TRUE(found) << name;
  }
  // The service account may read nodes.
  EXPECT_EQ(spec["serviceAccountName"].as<std::string>(), "gauntlet-worker");
  ASSERT_TRUE(Get("ServiceAccount/gauntlet-worker"));
  YAML::Node crb = Get("ClusterRoleBinding/gauntlet-worker-node-reader");
  ASSERT_TRUE(crb);
  EXPECT_EQ(crb["subjects"][0]["name"].as<std::string>(), "gauntlet-worker");
  EXPECT_EQ(crb["subjects"][0]["namespace"].as<std::string>(), kust["namespace"].as<std::string>());
  EXPECT_TRUE(Get("ClusterRole/" + crb["roleRef"]["name"].as<std::string>()));
}

TEST(Containers, RecipesUseOnlyExistingFlagsAndPassGpusAndTokenSafely) {
  const std::string d = Read(Deploy() + "/container/Containerfile.daemon");
  const std::string w = Read(Deploy() + "/container/Containerfile.worker");
  auto entry = [](const std::string& text) {
    std::string s;
    std::istringstream in(text);
    std::string line;
    bool cont = false;
    while (std::getline(in, line)) {
      if (line.rfind("ENTRYPOINT", 0) == 0 || line.rfind("CMD", 0) == 0 || cont) s += line + "\n";
      cont = (line.rfind("ENTRYPOINT", 0) == 0 || line.rfind("CMD", 0) == 0 || cont) && !line.empty() && line.back() == '\\';
    }
    return s;
  };
  ExpectFlagsExist("Containerfile.daemon", entry(d), Flags("serve"));
  ExpectFlagsExist("Containerfile.worker", entry(w), Flags("worker"));
  EXPECT_NE(d.find("FROM debian:12 AS build"), std::string::npos);
  EXPECT_NE(d.find("FROM debian:12-slim"), std::string::npos);
  EXPECT_NE(w.find("FROM nvidia/cuda:"), std::string::npos);
  EXPECT_NE(w.find("--gpus all"), std::string::npos);
  EXPECT_EQ(entry(w).find("--token"), std::string::npos) << "the token comes from the environment";
}

TEST(Systemd, UnitsVerifyAndUseOnlyExistingFlags) {
  auto serve = Flags("serve"), worker = Flags("worker"), slurm = Flags("slurm");
  std::map<std::string, std::set<std::string>*> units = {
      {"gauntlet.service", &serve}, {"gauntlet-worker@.service", &worker}, {"gauntlet-slurm.service", &slurm}};
  TempDir tmp;
  std::string args;
  for (auto& [unit, flags] : units) {
    std::string text = Read(Deploy() + "/systemd/" + unit);
    ASSERT_FALSE(text.empty()) << unit;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("\nExecStart=(.*)\n"))) << unit;
    ExpectFlagsExist(unit, m[1].str(), *flags);
    // The binary is installed at /usr/local/bin; verify against the one just built instead.
    text = std::regex_replace(text, std::regex("/usr/local/bin/gauntlet"), GauntletBin());
    args += " " + tmp.Write(unit, text);
    // Every variable ExecStart reads is set by an EnvironmentFile example or systemd itself.
    std::string env = Read(Deploy() + "/systemd/gauntlet.env") + Read(Deploy() + "/systemd/worker.env");
    std::regex var("\\$\\{([A-Z_]+)\\}");
    const std::string exec = m[1].str();
    for (auto it = std::sregex_iterator(exec.begin(), exec.end(), var); it != std::sregex_iterator(); ++it) {
      const std::string v = (*it)[1].str();
      if (v == "STATE_DIRECTORY") {
        EXPECT_NE(text.find("\nStateDirectory="), std::string::npos) << unit;
        continue;
      }
      EXPECT_NE(env.find("\n" + v + "="), std::string::npos) << unit << " reads ${" << v << "}, which no example sets";
    }
  }
  const std::string w = Read(Deploy() + "/systemd/gauntlet-worker@.service");
  EXPECT_EQ(w.find("PrivateDevices=yes"), std::string::npos) << "workers must see /dev/nvidia*";
  EXPECT_NE(w.find("DeviceAllow=/dev/nvidiactl"), std::string::npos);
  EXPECT_NE(Read(Deploy() + "/systemd/gauntlet.service").find("StateDirectory=gauntlet"), std::string::npos);
  int code = 0;
  if (Shell("command -v systemd-analyze", &code).empty() || code != 0) {
    GTEST_SKIP() << "systemd-analyze is not installed: units checked by parsing only";
  }
  const std::string out = Shell("systemd-analyze verify" + args, &code);
  EXPECT_EQ(code, 0) << out;
  // `verify` also warns about things it does not fail on; none are expected here.
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty()) ADD_FAILURE() << "systemd-analyze verify: " << line;
}

TEST(Slurm, TheExampleLauncherConfigParses) {
  auto j = ReadJsonOrYaml(Deploy() + "/slurm/slurm.example.yaml");
  ASSERT_TRUE(j.ok()) << j.status().message();
  auto c = slurm::ParseSlurmConfig(*j);
  ASSERT_TRUE(c.ok()) << c.status().field() << ": " << c.status().message();
  EXPECT_EQ(c->partitions.size(), 3u);
  EXPECT_EQ(c->partitions[1].offer.gpus.size(), 8u);
  std::set<std::string> args;
  for (auto& a : slurm::SbatchArgs(*c, c->partitions[1], "site")) args.insert(a);
  EXPECT_TRUE(args.count("--gres=gpu:h200:8"));
  EXPECT_TRUE(args.count("--constraint=h200"));
}

}  // namespace
}  // namespace gauntlet::test
