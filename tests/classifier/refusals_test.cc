// The refusal table (classifier/refusals.h): which final exceptions are refusals, the
// family key they get, and the ones that must stay crashes although their words come close.
#include <gtest/gtest.h>

#include <cctype>
#include <vector>

#include "classifier/classifier.h"
#include "classifier/refusals.h"
#include "exits.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using namespace gauntlet::classifier::test_exits;

namespace {

std::string Key(std::string type, std::string message) {
  return RefusalKey({std::move(type), std::move(message)}).value_or("none");
}

}  // namespace

TEST(Refusals, FamiliesFromTheMessage) {
  EXPECT_EQ(Key("RuntimeError", "FlashAttention only support fp16 and bf16 data type"), "unsupported:dtype");
  EXPECT_EQ(Key("NotImplementedError", "kv_cache_dtype fp8_e5m2 is not implemented for the Triton kernel"),
            "unsupported:dtype");
  EXPECT_EQ(Key("XlaRuntimeError", "UNIMPLEMENTED: Unsupported algorithm: ALG_DOT_TF32_TF32_F32_X3"),
            "unsupported:dtype");
  EXPECT_EQ(Key("RuntimeError", "Only support head size 64, 128, and 256 for now"), "unsupported:head_dim");
  EXPECT_EQ(Key("ValueError", "Unsupported head_dim: 512"), "unsupported:head_dim");
  EXPECT_EQ(Key("RuntimeError", "Plan(...)::<lambda()> failed to dispatch head_dim 160"), "unsupported:head_dim");
  EXPECT_EQ(Key("ValueError", "Total number of attention heads (40) must be divisible by tensor parallel size (3)."),
            "unsupported:shape");
  EXPECT_EQ(Key("ValueError", "block size 128, which must be a multiple of 256."), "unsupported:shape");
  EXPECT_EQ(Key("ValueError", "Speculative decoding is currently not supported with torch_native attention backend"),
            "unsupported:option");
  EXPECT_EQ(Key("RuntimeError", "No available kernel. Aborting execution."), "unsupported:option");
  // Refusals by type, whatever the message.
  EXPECT_EQ(Key("NotImplementedError", ""), "unsupported:option");
  EXPECT_EQ(Key("InvalidBackend", "Invalid backend: 'tensorrt'"), "unsupported:option");
  EXPECT_EQ(Key("Unsupported", "Data-dependent branching"), "unsupported:option");
  // One message naming two topics: the head dim decides, then the dtype (documented order).
  EXPECT_EQ(Key("RuntimeError", "head dim 80 is not supported for bf16"), "unsupported:head_dim");
  EXPECT_EQ(Key("RuntimeError", "fp8 is not supported with page size 1"), "unsupported:dtype");
}

TEST(Refusals, RealCrashesStayCrashes) {
  // Program bugs whose words come close: wrong type, "must" without a constraint, "not" in passing.
  EXPECT_EQ(Key("TypeError", "unsupported operand type(s) for *: 'NoneType' and 'int'"), "none");
  EXPECT_EQ(Key("AssertionError", "FlashInfer only supports page_size 1"), "none");
  EXPECT_EQ(Key("RuntimeError", "The size of tensor a (4096) must match the size of tensor b (4097)"), "none");
  EXPECT_EQ(Key("RuntimeError", "q must be on CUDA"), "none");
  EXPECT_EQ(Key("RuntimeError", "expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16"),
            "none");
  EXPECT_EQ(Key("RuntimeError", "CUDA error: operation not permitted when stream is capturing"), "none");
  EXPECT_EQ(Key("KeyError", "'model.layers.3.mlp.experts.w13_weight' is not supported"), "none");
}

TEST(Refusals, MissingOptionalBackends) {
  EXPECT_EQ(Key("ModuleNotFoundError", "No module named 'tvm'"), "unsupported:not_installed:tvm");
  EXPECT_EQ(Key("ModuleNotFoundError", "No module named 'flash_attn.flash_attn_interface'"),
            "unsupported:not_installed:flash_attn");
  EXPECT_EQ(Key("ImportError",
                "FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package "
                "flash_attn seems to be not installed. Please refer to the documentation"),
            "unsupported:not_installed:flash_attn");
  // transformers 5.17's wording, as hf-serve printed it on the H200 (2026-12-01).
  EXPECT_EQ(Key("ImportError",
                "FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package "
                "for FlashAttention2 doesn't seem to be installed."),
            "unsupported:not_installed:flash_attn");
  EXPECT_EQ(Key("ImportError", "the package for FlashAttention3 does not seem to be installed."),
            "unsupported:not_installed:flashattention3");
  EXPECT_EQ(Key("RuntimeError", "Cannot find a working triton installation. Either the package is not installed"),
            "unsupported:not_installed:triton");
  EXPECT_EQ(Key("ImportError", "flashinfer is not installed. Install it with `pip install flashinfer-python`"),
            "unsupported:not_installed:flashinfer");
  EXPECT_EQ(Key("ImportError", "Please install it via `pip install sgl-kernel>=0.1.0`"),
            "unsupported:not_installed:sgl_kernel");
  EXPECT_EQ(Key("ImportError", "LlamaTokenizer requires the SentencePiece library but it was not found in your "
                               "environment."),
            "unsupported:not_installed:sentencepiece");
}

TEST(Refusals, MissingModulesThatAreTheProgramsFault) {
  // The program's own module, or an installed package's own extension: a crash.
  EXPECT_EQ(Key("ModuleNotFoundError", "No module named 'bench_utils'"), "none");
  EXPECT_EQ(Key("ModuleNotFoundError", "No module named 'vllm._C'"), "none");
  // Installed but broken (ABI, version): "cannot import name", "undefined symbol" are not "missing".
  EXPECT_EQ(Key("ImportError", "flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"), "none");
  EXPECT_EQ(
      Key("ImportError", "cannot import name 'triton_key' from 'triton.compiler.compiler'. pip install -U triton"),
      "none");
  EXPECT_EQ(Key("ImportError", "libcudnn.so.9: cannot open shared object file: No such file or directory"), "none");
}

// The rule only runs on lines holding one of its needles: every refusal must contain one, or it
// would be missed on a line that no other rule's needle happens to hit.
TEST(Refusals, EveryRefusalHoldsANeedle) {
  const std::vector<ExceptionLine> refusals = {
      {"NotImplementedError", ""},
      {"InvalidBackend", "Invalid backend: 'x'"},
      {"Unsupported", "graph break"},
      {"XlaRuntimeError", "UNIMPLEMENTED: x"},
      {"ValueError", "page_size must be 16 or 32"},
      {"RuntimeError", "failed to dispatch group_size 3"},
      {"ModuleNotFoundError", "No module named 'xformers'"},
      {"ImportError", "LlamaTokenizer requires the SentencePiece library but it was not found in your environment"},
      {"RuntimeError", "Cannot find a working triton installation"}};
  const std::vector<std::string> needles = RefusalNeedles();
  for (const auto& e : refusals) {
    SCOPED_TRACE(e.type + ": " + e.message);
    ASSERT_TRUE(RefusalKey(e)) << "the example must be a refusal";
    std::string text = e.type + ": " + e.message;
    for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool found = false;
    for (const auto& n : needles) found = found || text.find(n) != std::string::npos;
    EXPECT_TRUE(found);
  }
}

TEST(Refusals, PackageNamesAreNormalised) {
  EXPECT_EQ(NormalizePackage("flash-attn>=2.5"), "flash_attn");
  EXPECT_EQ(NormalizePackage("`flashinfer-python`"), "flashinfer");
  EXPECT_EQ(NormalizePackage("SentencePiece"), "sentencepiece");
  EXPECT_EQ(NormalizePackage("vllm._C"), "vllm");
  EXPECT_EQ(NormalizePackage("nvidia-cutlass-dsl[cu12]"), "cutlass");
  EXPECT_EQ(NormalizePackage("DeepGEMM"), "deep_gemm");
}

// Through the whole classifier: the cause on the next line of the same rank wins although another
// rank writes in between, and a refusal never outranks a fixed fact on the same line.
TEST(Refusals, EndToEnd) {
  const std::string interleaved =
      "[rank0]: Traceback (most recent call last):\n"
      "[rank0]:   File \"/t/output_graph.py\", line 9, in call\n"
      "[rank0]: torch._dynamo.exc.BackendCompilerFailed: backend='tvm' raised:\n"
      "[rank1]: step 10 loss 2.31\n"
      "[rank0]: ModuleNotFoundError: No module named 'tvm'\n";
  auto c = ClassifyText(interleaved, ExitCode(1));
  EXPECT_EQ(c.signature, "unsupported:not_installed:tvm");
  EXPECT_EQ(c.evidence, "[rank0]: ModuleNotFoundError: No module named 'tvm'");

  const std::string oom_words =
      "Traceback (most recent call last):\n"
      "  File \"/t/attn.py\", line 3, in f\n"
      "RuntimeError: CUDA out of memory while the fp8 path is not supported\n";
  EXPECT_EQ(ClassifyText(oom_words, ExitCode(1)).signature, "oom:cuda");

  // Without the wrapper's cause the wrapper itself is all there is: a crash, never a refusal.
  const std::string no_cause =
      "Traceback (most recent call last):\n"
      "  File \"/t/output_graph.py\", line 9, in call\n"
      "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
      "\n"
      "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information\n";
  EXPECT_EQ(ClassifyText(no_cause, ExitCode(1)).signature,
            "crashed:BackendCompilerFailed:backend='inductor' raised:@output_graph.py");

  // A refusal printed and handled by a run that exits 0 does not fail it.
  const std::string handled =
      "Traceback (most recent call last):\n"
      "  File \"/t/probe.py\", line 3, in probe\n"
      "NotImplementedError: fp8 is not implemented on this path\n"
      "falling back to bf16\n";
  ExitInfo ok;
  ok.exit_code = 0;
  EXPECT_EQ(ClassifyText(handled, ok).verdict, Verdict::kPassed);
}
