// core/bundle.h: packing a folder, reading an archive back, and unpacking it safely.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/bundle.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
namespace fs = std::filesystem;
using test::TempDir;

std::string Slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Bundle, PacksAFolderTheSameWayEveryTimeAndUnpacksIt) {
  TempDir t;
  fs::create_directories(t.path() + "/src/lib/deep");
  fs::create_directories(t.path() + "/src/.git");
  fs::create_directories(t.path() + "/src/__pycache__");
  std::ofstream(t.path() + "/src/run.sh") << "#!/bin/sh\necho hi\n";
  fs::permissions(t.path() + "/src/run.sh", fs::perms::owner_all);
  std::ofstream(t.path() + "/src/lib/deep/data.bin") << std::string("a\0b\nend\n", 8);
  std::ofstream(t.path() + "/src/.git/HEAD") << "ref";
  std::ofstream(t.path() + "/src/__pycache__/x.pyc") << "pyc";
  fs::create_symlink("/etc/passwd", t.path() + "/src/passwd");
  auto a = PackFolder(t.path() + "/src");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->files, 2u);
  ASSERT_EQ(a->skipped.size(), 1u);
  EXPECT_NE(a->skipped[0].find("passwd: a symbolic link"), std::string::npos);
  auto b = PackFolder(t.path() + "/src");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(BundleSha256(a->bytes), BundleSha256(b->bytes));
  EXPECT_TRUE(IsSha256Hex(BundleSha256(a->bytes)));

  const std::string dest = t.path() + "/out";
  ASSERT_TRUE(ExtractBundle(a->bytes, dest).ok());
  EXPECT_EQ(Slurp(dest + "/lib/deep/data.bin"), std::string("a\0b\nend\n", 8));
  EXPECT_EQ(access((dest + "/run.sh").c_str(), X_OK), 0);
  EXPECT_FALSE(fs::exists(dest + "/passwd"));
  EXPECT_FALSE(fs::exists(dest + "/.git"));
  // A destination that exists is never written into.
  EXPECT_FALSE(ExtractBundle(a->bytes, dest).ok());
}

TEST(Bundle, RefusesPathsOutOfItsFolderAndMalformedArchives) {
  auto field = [](const std::string& bytes) {
    auto r = ReadBundle(bytes);
    return r.ok() ? std::string("ok") : r.status().field() + ": " + r.status().message();
  };
  const std::string h = "gauntlet-bundle 1\n";
  EXPECT_EQ(field(h + "file - 2 a.py\nhiend\n"), "ok");
  for (const char* p : {"../a", "/etc/passwd", "a/../../b", "a//b", "./a", "a/."})
    EXPECT_NE(field(h + "file - 1 " + p + "\nxend\n").find("body: not a suite bundle"), std::string::npos) << p;
  EXPECT_NE(field(h + "file - 9 a\nxend\n").find("cut off"), std::string::npos);
  EXPECT_NE(field(h + "file - 1 a\nxfile - 1 a\nyend\n").find("twice"), std::string::npos);
  EXPECT_NE(field(h + "file - 1 a\nxfile - 1 a/b\nyend\n").find("both a file and a folder"), std::string::npos);
  EXPECT_NE(field(h + "file - 1 a\nxend\nextra").find("after its end"), std::string::npos);
  EXPECT_NE(field("tar\n").find("gauntlet-bundle"), std::string::npos);
  EXPECT_NE(field(h + "file - -1 a\nxend\n").find("not a number"), std::string::npos);

  // Unpacking goes through the same check, and never follows a link planted where it writes.
  TempDir t;
  EXPECT_FALSE(ExtractBundle(h + "file - 1 ../escape\nxend\n", t.path() + "/d").ok());
  EXPECT_FALSE(fs::exists(t.path() + "/escape"));
}

TEST(Bundle, TooManyBytesNameTheLimit) {
  TempDir t;
  std::ofstream(t.path() + "/big") << std::string(kMaxBundleBytes, 'x');
  auto r = PackFolder(t.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "bundle");
  EXPECT_NE(r.status().message().find("16 MiB"), std::string::npos) << r.status().message();
}

TEST(Bundle, FindsTheFieldThatUsesSuiteDir) {
  using nlohmann::json;
  json s = {{"stages", {{{"argv", {"python3", "x.py"}}}, {{"argv", {"a"}}, {"env", {{"CHECK", "{suite_dir}/c"}}}}}}};
  EXPECT_EQ(FieldUsingSuiteDir(s), "stages[1].env.CHECK");
  s["stages"][0]["argv"][1] = "{suite_dir}/x.py";
  EXPECT_EQ(FieldUsingSuiteDir(s), "stages[0].argv[1]");
  EXPECT_EQ(FieldUsingSuiteDir(json{{"stages", {{{"argv", {"python3", "-c", "print({'suite_dir': 1})"}}}}}}), "");
}

}  // namespace
}  // namespace gauntlet
