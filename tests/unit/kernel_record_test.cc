// The kernel recorder's CPU side (issue 30): its record files parsed and merged, kernel families,
// the dispatch expectation's validation and its check, on records in the recorder's format with
// the kernel names CUDA reports for PyTorch's SDPA backends (tests/fixtures/kernrec/README.md).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/dispatch.h"
#include "core/kernel_families.h"
#include "core/kernel_record.h"
#include "core/suite.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;

std::string Fixture(const std::string& name) {
  std::ifstream in(test::SourceDir() + "/tests/fixtures/kernrec/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

KernelRecord RecordOf(const std::vector<std::string>& fixtures) {
  KernelRecord rec;
  for (auto& f : fixtures) {
    auto p = ParseKernelRecord(Fixture(f));
    EXPECT_TRUE(p.ok()) << f << ": " << p.status().field() << ": " << p.status().message();
    if (p.ok()) MergeProcess(&rec, *p);
  }
  return rec;
}

const json& SdpaDispatch() {
  static const json d = {{"backend",
                          {{"FLASH_ATTENTION", "pytorch_flash::|flash_fwd|flash::FlashAttn"},
                           {"EFFICIENT_ATTENTION", "fmha_cutlassF|efficient_attention"},
                           {"CUDNN_ATTENTION", "cudnn_generated_fort_native_sdpa|cudnn\\w*sdpa"}}}};
  return d;
}

TEST(KernelRecord, ParsesTheRecordersFile) {
  auto p = ParseKernelRecord(Fixture("sdpa-flags-fp32-flash.txt"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->pid, 4242);
  EXPECT_EQ(p->state, "complete");
  EXPECT_EQ(p->cupti, "ok");
  ASSERT_EQ(p->kernels.size(), 6u);
  const std::string mem_eff =
      "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, "
      "64, 64, 64, true, true>::Params)";
  ASSERT_TRUE(p->kernels.count(mem_eff));
  EXPECT_EQ(p->kernels.at(mem_eff).count, 24);
  EXPECT_EQ(p->kernels.at(mem_eff).total_ns, 118243840);
  EXPECT_EQ(p->kernels.at(mem_eff).max_ns, 5112320);
  // A name longer than the cap is cut, not refused.
  for (auto& [name, k] : p->kernels) EXPECT_LE(name.size(), kMaxRecordNameChars);
}

TEST(KernelRecord, RefusesWhatIsNotARecordNamingTheLine) {
  auto bad_header = ParseKernelRecord("kernrec 2\nstate complete\n");
  ASSERT_FALSE(bad_header.ok());
  EXPECT_EQ(bad_header.status().field(), "line 1");
  auto bad_kernel = ParseKernelRecord("kernrec 1\nstate complete\nkernel 3 -5 1 k\n");
  ASSERT_FALSE(bad_kernel.ok());
  EXPECT_EQ(bad_kernel.status().field(), "line 3");
  auto no_name = ParseKernelRecord("kernrec 1\nstate complete\nkernel 3 5 1\n");
  EXPECT_FALSE(no_name.ok());
  auto unknown = ParseKernelRecord("kernrec 1\nstate complete\nbogus 1\n");
  EXPECT_FALSE(unknown.ok());
  EXPECT_FALSE(ParseKernelRecord("").ok());
  EXPECT_FALSE(ParseKernelRecord("kernrec 1\n").ok()) << "no state line";
  EXPECT_FALSE(ParseKernelRecord("kernrec 1\nstate finished\n").ok());
}

TEST(KernelRecord, MergesProcessesAndCountsWhatMakesItIncomplete) {
  KernelRecord rec = RecordOf({"sdpa-flags-fp32-flash.txt", "killed-mid-run.txt"});
  EXPECT_EQ(rec.processes, 2);
  EXPECT_EQ(rec.incomplete, 1);
  EXPECT_FALSE(rec.Complete());
  // The same kernel in two processes is one entry with summed counts and the larger maximum.
  int64_t count = 0;
  for (auto& [name, k] : rec.kernels)
    if (name.rfind("fmha_cutlassF", 0) == 0) count = k.count;
  EXPECT_EQ(count, 36);
  EXPECT_TRUE(RecordOf({"sdpa-flags-fp32-flash.txt"}).Complete());
  KernelRecord none;
  EXPECT_FALSE(none.Complete()) << "no process: nothing is proven absent";
  auto dropped = ParseKernelRecord("kernrec 1\nstate complete\ncupti ok\ndropped 7\n");
  ASSERT_TRUE(dropped.ok());
  KernelRecord d;
  MergeProcess(&d, *dropped);
  EXPECT_FALSE(d.Complete());
  auto no_cupti = ParseKernelRecord("kernrec 1\nstate complete\ncupti libcupti not loadable (x)\n");
  ASSERT_TRUE(no_cupti.ok());
  KernelRecord n;
  MergeProcess(&n, *no_cupti);
  EXPECT_FALSE(n.Complete());
  ASSERT_EQ(n.problems.size(), 1u);
  EXPECT_NE(n.problems[0].find("libcupti not loadable"), std::string::npos);
}

TEST(KernelRecord, BoundsDistinctNamesAndCountsTheRestAsDropped) {
  ProcessKernels p;
  p.state = "complete";
  for (size_t i = 0; i < kMaxRecordNames + 10; ++i) p.kernels["k" + std::to_string(i)] = {2, 10, 5};
  KernelRecord rec;
  MergeProcess(&rec, p);
  EXPECT_EQ(rec.kernels.size(), kMaxRecordNames);
  EXPECT_EQ(rec.names_dropped, 20);
  EXPECT_FALSE(rec.Complete());
}

TEST(KernelRecord, TheStoredFormKeepsTheTopKernelsByTime) {
  const json j = KernelRecordJson(RecordOf({"sdpa-flags-fp32-flash.txt"}), 3);
  EXPECT_EQ(j["processes"], 1);
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["distinct"], 6);
  EXPECT_EQ(j["omitted"], 3);
  ASSERT_EQ(j["top"].size(), 3u);
  EXPECT_EQ(j["top"][0]["family"], "fmha_cutlassF (memory-efficient)");
  EXPECT_EQ(j["top"][1]["family"], "gemm (cuBLAS/CUTLASS)");
  EXPECT_EQ(j["top"][2]["family"], "softmax (unfused attention)");
  EXPECT_EQ(j["carrying_family"], "fmha_cutlassF (memory-efficient)");
  EXPECT_EQ(j["launches"], 40);
  // What a report carries back is re-checked and bounded by the daemon.
  auto again = NormalizeKernelRecordJson(j, 2);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)["top"].size(), 2u);
  json bad = j;
  bad["top"][1]["count"] = -1;
  auto refused = NormalizeKernelRecordJson(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "kernels.top[1].count");
  EXPECT_FALSE(NormalizeKernelRecordJson(json::array()).ok());
}

TEST(KernelFamilies, NamesTheFamilyByTheTableElseTheFunctionsOwnName) {
  EXPECT_EQ(KernelFamily("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
                         "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
            "fmha_cutlassF (memory-efficient)");
  EXPECT_EQ(KernelFamily("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0"),
            "cudnn_sdpa (cuDNN)");
  EXPECT_EQ(KernelFamily("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
                         "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, false, "
                         "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)"),
            "flash_fwd (FlashAttention-2)");
  EXPECT_EQ(KernelFamily("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_"
                         "k_off_kernel__5x_cublas"),
            "gemm (cuBLAS/CUTLASS)");
  // Not in the table: the function's own name, without namespaces, template arguments or parameters.
  EXPECT_EQ(KernelFamily("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, "
                         "-2, true>(at::cuda::detail::TensorInfo<float, unsigned int>)"),
            "indexSelectLargeIndex");
  EXPECT_EQ(KernelFamily("my_kernel"), "my_kernel");
  EXPECT_FALSE(KernelFamily("").empty());
}

TEST(KernelFamilies, FusedAttentionCarriesARunWhateverGemmsRanBeside) {
  // The float64 reference's GEMM took more time than the fused kernel: the fused kernel still carried the run.
  EXPECT_EQ(CarryingFamily(RecordOf({"sdpa-forced-flash-bf16.txt"}).kernels), "flash_fwd (FlashAttention-2)");
  EXPECT_EQ(CarryingFamily(RecordOf({"sdpa-flags-bf16-cudnn.txt"}).kernels), "cudnn_sdpa (cuDNN)");
  EXPECT_EQ(CarryingFamily(RecordOf({"eager-attention.txt"}).kernels), "softmax (unfused attention)");
  EXPECT_EQ(CarryingFamily({{"void foo::bar<int>(int)", {1, 5, 5}}, {"baz", {1, 9, 9}}}), "baz");
  EXPECT_EQ(CarryingFamily({}), "");
}

TEST(Dispatch, AMatchingKernelVerifiesTheBackend) {
  const DispatchCheck c =
      JudgeDispatch(SdpaDispatch(), {{"backend", "FLASH_ATTENTION"}, {"dtype", "bf16"}}, RecordOf({"sdpa-forced-flash-bf16.txt"}));
  EXPECT_EQ(c.kind, DispatchCheck::Kind::kVerified);
  EXPECT_EQ(c.param, "backend");
  EXPECT_NE(c.matched.find("pytorch_flash::flash_fwd_kernel"), std::string::npos);
}

TEST(Dispatch, ACompleteRecordWithoutTheKernelIsAFallbackNamingWhatRan) {
  DispatchCheck c = JudgeDispatch(SdpaDispatch(), {{"backend", "FLASH_ATTENTION"}}, RecordOf({"sdpa-flags-fp32-flash.txt"}));
  EXPECT_EQ(c.kind, DispatchCheck::Kind::kFallback);
  EXPECT_EQ(c.family, "fmha_cutlassF (memory-efficient)");
  c = JudgeDispatch(SdpaDispatch(), {{"backend", "FLASH_ATTENTION"}}, RecordOf({"sdpa-flags-bf16-cudnn.txt"}));
  EXPECT_EQ(c.kind, DispatchCheck::Kind::kFallback);
  EXPECT_EQ(c.family, "cudnn_sdpa (cuDNN)");
  EXPECT_EQ(DispatchCheckJson(c)["status"], "fallback");
}

TEST(Dispatch, AnIncompleteOrMissingRecordIsUnverifiedNeverAFallback) {
  // Killed mid-run, nothing matching seen so far: nothing is proven.
  DispatchCheck c = JudgeDispatch(SdpaDispatch(), {{"backend", "FLASH_ATTENTION"}}, RecordOf({"killed-mid-run.txt"}));
  EXPECT_EQ(c.kind, DispatchCheck::Kind::kUnverified);
  EXPECT_NE(c.reason.find("complete record"), std::string::npos) << c.reason;
  c = JudgeDispatch(SdpaDispatch(), {{"backend", "FLASH_ATTENTION"}}, KernelRecord{});
  EXPECT_EQ(c.kind, DispatchCheck::Kind::kUnverified);
  KernelRecord dropped = RecordOf({"sdpa-flags-fp32-flash.txt"});
  dropped.dropped = 3;
  c = JudgeDispatch(SdpaDispatch(), {{"backend", "FLASH_ATTENTION"}}, dropped);
  EXPECT_EQ(c.kind, DispatchCheck::Kind::kUnverified);
  EXPECT_NE(c.reason.find("dropped"), std::string::npos);
  // But a match in an incomplete record is proof the kernel ran.
  c = JudgeDispatch(SdpaDispatch(), {{"backend", "EFFICIENT_ATTENTION"}}, RecordOf({"killed-mid-run.txt"}));
  EXPECT_EQ(c.kind, DispatchCheck::Kind::kVerified);
}

TEST(Dispatch, AValueWithoutAnExpectationIsNotChecked) {
  EXPECT_EQ(JudgeDispatch(SdpaDispatch(), {{"backend", "MATH"}}, RecordOf({"eager-attention.txt"})).kind,
            DispatchCheck::Kind::kNone);
  EXPECT_EQ(JudgeDispatch(SdpaDispatch(), {{"dtype", "bf16"}}, RecordOf({"eager-attention.txt"})).kind,
            DispatchCheck::Kind::kNone);
}

json SuiteWithDispatch(const json& dispatch) {
  return {{"name", "s"},
          {"version", 1},
          {"parameters", {{"backend", {"flash", "cudnn"}}, {"dtype", {"bf16"}}}},
          {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"prog", "{backend}"}}, {"dispatch", dispatch}}}}};
}

TEST(DispatchSpec, ASuiteDeclaresItAndBadOnesNameTheField) {
  EXPECT_TRUE(ParseSuite(SuiteWithDispatch({{"backend", {{"flash", "flash_fwd"}, {"cudnn", "cudnn\\w*sdpa"}}}})).ok());
  auto field = [](const json& d) {
    auto s = ParseSuite(SuiteWithDispatch(d));
    return s.ok() ? std::string("(accepted)") : s.status().field();
  };
  EXPECT_EQ(field({{"bakend", {{"flash", "x"}}}}), "stages[0].dispatch.bakend");
  EXPECT_EQ(field({{"backend", {{"flsh", "x"}}}}), "stages[0].dispatch.backend.flsh");
  EXPECT_EQ(field({{"backend", {{"flash", "(unclosed"}}}}), "stages[0].dispatch.backend.flash");
  EXPECT_EQ(field({{"backend", {{"flash", ""}}}}), "stages[0].dispatch.backend.flash");
  EXPECT_EQ(field({{"backend", "flash_fwd"}}), "stages[0].dispatch.backend");
  EXPECT_EQ(field(json::array()), "stages[0].dispatch");
  json s = SuiteWithDispatch({{"backend", {{"flash", "x"}}}});
  s["stages"][0]["record_kernels"] = "no";
  EXPECT_EQ(ParseSuite(s).status().field(), "stages[0].record_kernels");
  s["stages"][0]["record_kernels"] = false;
  EXPECT_EQ(ParseSuite(s).status().field(), "stages[0].dispatch") << "an expectation needs the record";
  s["stages"][0].erase("dispatch");
  EXPECT_TRUE(ParseSuite(s).ok());
}

TEST(DispatchSpec, TheBuiltInTorchSdpaSuiteDeclaresItsExpectations) {
  std::ifstream in(test::SourceDir() + "/suites/torch-sdpa.json");
  const json j = json::parse(in);
  auto s = ParseSuite(j);
  ASSERT_TRUE(s.ok()) << s.status().field() << ": " << s.status().message();
  // The stage that runs the backend (the probe before it asks PyTorch and records nothing).
  json d;
  for (auto& st : j["stages"])
    if (st.contains("dispatch")) d = st["dispatch"];
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(JudgeDispatch(d, {{"backend", "FLASH_ATTENTION"}}, RecordOf({"sdpa-flags-fp32-flash.txt"})).family,
            "fmha_cutlassF (memory-efficient)");
  EXPECT_EQ(JudgeDispatch(d, {{"backend", "CUDNN_ATTENTION"}}, RecordOf({"sdpa-flags-bf16-cudnn.txt"})).kind,
            DispatchCheck::Kind::kVerified);
}

}  // namespace
}  // namespace gauntlet
