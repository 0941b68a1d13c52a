// gauntlet-kernels: NVFP4 GEMM backends, node preflight. Subcommands: list, gemm, preflight.
// Every subcommand prints one JSON document on stdout; exit codes are in exit_codes.hpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "exit_codes.hpp"
#include "gemm_cmd.hpp"
#include "preflight.hpp"
#include "versions.hpp"

#include <sstream>

#ifndef GAUNTLET_VERSION
#define GAUNTLET_VERSION "dev"
#endif

using namespace gauntlet::kernels;
using json = nlohmann::json;

int main(int argc, char** argv) {
  CLI::App app{"gauntlet-kernels: NVFP4 GEMM backends checked against an fp64 reference, and node preflight"};
  app.require_subcommand(1);
  app.set_version_flag("--version", GAUNTLET_VERSION);

  auto* list = app.add_subcommand("list", "backends and the CUDA architectures each was built for");

  GemmOptions g;
  auto* gemm = app.add_subcommand("gemm", "run one backend on one shape; exit 0 passed, 3 unsupported, 4 wrong output");
  gemm->add_option("--backend", g.backend, "reference | dequant_cublas | mma | gemv | sm120_native")->required();
  std::string shape;
  auto* om = gemm->add_option("--m", g.M, "rows of A and C");
  auto* on = gemm->add_option("--n", g.N, "rows of W, columns of C");
  auto* ok = gemm->add_option("--k", g.K, "reduction length (multiple of 16)");
  auto* os = gemm->add_option("--shape", shape, "MxNxK instead of --m/--n/--k (one suite parameter)");
  os->excludes(om)->excludes(on)->excludes(ok);
  gemm->add_option("--seed", g.seed, "input seed")->capture_default_str();
  gemm->add_option("--iters", g.iters, "timed runs (median reported)")->capture_default_str();
  gemm->add_option("--warmup", g.warmup, "untimed runs first")->capture_default_str();
  gemm->add_option("--scale-layout", g.scale_layout, "plain | swizzled (128x4 tiles)")->capture_default_str();
  gemm->add_option("--fault", g.fault, "scale-layout: read scales in the wrong layout on purpose; none: no fault");
  gemm->add_option("--mma-path", g.mma_path, "mma backend: auto | wgmma | sync")->capture_default_str();
  gemm->add_option("--scale-signs", g.scale_signs, "positive | mixed: every third block scale negated (the reference follows)")
      ->capture_default_str();
  gemm->add_option("--timing", g.timing,
                   "flush: each run alone after an L2 flush | rotate: back-to-back runs over rotated inputs (graph replay)")
      ->capture_default_str();
  gemm->add_option("--rotate-launches", g.rotate_launches, "--timing rotate: launches per graph replay")
      ->capture_default_str();
  gemm->add_option("--check-budget", g.check_budget, "fp64 multiply-adds the CPU check may spend")->capture_default_str();

  auto* version = app.add_subcommand("version", "tool, CUDA runtime, driver and cuBLAS versions (a suite fingerprint)");

  PreflightOptions p;
  auto* pre = app.add_subcommand("preflight", "copy bandwidth, bf16 GEMM rate, ECC state; non-zero exit: take no trials");
  pre->add_option("--gemm-size", p.gemm_size, "M = N = K of the bf16 GEMM")->capture_default_str();
  pre->add_option("--copy-mib", p.copy_mib, "MiB per copy")->capture_default_str();
  pre->add_option("--iters", p.iters, "timed runs (median)")->capture_default_str();
  pre->add_flag("--errors-only", p.skip_perf, "skip the measurements, read the error counters only");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_code::kUsage;
  }

  json out;
  int code = exit_code::kPassed;
  if (*gemm) {
    if (g.fault == "none") g.fault.clear();
    if (!shape.empty()) {
      char x1 = 0, x2 = 0;
      std::istringstream in(shape);
      if (!(in >> g.M >> x1 >> g.N >> x2 >> g.K) || x1 != 'x' || x2 != 'x' || in.peek() != EOF) {
        std::cout << json{{"verdict", "error"}, {"detail", "--shape must look like 16x4096x4096"}}.dump() << std::endl;
        return exit_code::kUsage;
      }
    } else if (!*om || !*on || !*ok) {
      std::cout << json{{"verdict", "error"}, {"detail", "give --m, --n and --k, or --shape MxNxK"}}.dump() << std::endl;
      return exit_code::kUsage;
    }
  }
  if (*version) {
    out = versions();
  } else if (*list) {
    out["version"] = GAUNTLET_VERSION;
    out["backends"] = json::array();
    for (const auto& b : list_backends())
      out["backends"].push_back({{"name", b.name}, {"archs", b.archs}, {"description", b.description}});
  } else if (*gemm) {
    code = run_gemm(g, out);
  } else if (*pre) {
    code = run_preflight(p, out);
  }
  std::cout << out.dump() << std::endl;
  return code;
}
