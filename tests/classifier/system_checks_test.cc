// The shapes of docs/CLASSIFIER.md "Failed checks", "The system, not the config" and "Deadlines",
// each written as its tool's source prints it (GoogleTest's gtest.cc, JUnit's
// AssertionFailedError, Rust's core::panicking, doctest's reporter, the CUDA samples' QA lines,
// CUDA's driver_types.h texts, NCCL's net_ib.cc and shmutils.cc, PyTorch's DataLoader and c10d
// store, absl's status codes), and the basis every verdict carries (core/basis.h).
#include <gtest/gtest.h>

#include "classifier/check_report.h"
#include "classifier/classifier.h"
#include "exits.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using namespace gauntlet::classifier::test_exits;

namespace {
Classification SysJudge(const std::string& log, int exit_code = 1) { return ClassifyText(log, ExitCode(exit_code)); }
}  // namespace

TEST(FailedChecks, EachFrameworksAssertionMessageIsAWrongResult) {
  for (const char* log : {
           "gemm_test.cc:41: Failure\nExpected equality of these values:\n  ref[i]\n    Which is: 1\n  out[i]\n    Which is: 2\n",
           "test.cc:9: Failure\nExpected: (err) < (tol), actual: 0.5 vs 0.001\n",
           "test.cc:9: Failure\nThe difference between a and b is 0.25, which exceeds 1e-3, where\n",
           "org.opentest4j.AssertionFailedError: expected: <42> but was: <41>\n",
           "junit.framework.ComparisonFailure: expected:<[1.0]> but was:<[0.5]>\n",
           "thread 'tests::matmul' panicked at src/lib.rs:10:5:\nassertion `left == right` failed\n  left: 1\n right: 2\n",
           "thread 'main' panicked at 'assertion failed: `(left == right)`\n  left: `1`,\n right: `2`', src/main.rs:4:5\n",
           "test.cpp(12): ERROR: CHECK( add(1, 1) == 3 ) is NOT correct!\n  values: CHECK( 2 == 3 )\n",
           "mismatch at index 17: expected 3.0, got 2.5\n",
           "max difference 0.5 exceeds 0.001\n",
           "Result = FAIL\n",
           "&&&& FAILED matrixMul\n",
           "Disposition: Failed\n",
       }) {
    SCOPED_TRACE(log);
    Classification c = SysJudge(log);
    EXPECT_EQ(c.verdict, Verdict::kWrongOutput) << ToJson(c).dump();
  }
}

TEST(FailedChecks, ArgumentChecksAndPassingReportsAreNot) {
  EXPECT_EQ(FailedCheck("runtimeerror: expected scalar type float but found half"), CheckReport::kNone);
  EXPECT_EQ(FailedCheck("expected all tensors to be on the same device, but got cpu"), CheckReport::kNone);
  EXPECT_EQ(FailedCheck("result = pass"), CheckReport::kNone);
  EXPECT_EQ(FailedCheck("disposition: passed"), CheckReport::kNone);
  EXPECT_EQ(FailedCheck("the build failed to find cuda, falling back"), CheckReport::kNone);
  // An argument check raised as an exception stays a crash of the program.
  Classification c = SysJudge("RuntimeError: expected 3 dims, got 2\n");
  EXPECT_EQ(c.verdict, Verdict::kCrashed) << ToJson(c).dump();
  // A passing run that printed the words is believed (exit 0, no strong fact).
  EXPECT_EQ(SysJudge("checking: expected 4, got 4\nResult = PASS\n", 0).verdict, Verdict::kPassed);
}

TEST(FailedChecks, AnAssertionInsideALibraryIsACrashNotAWrongResult) {
  const std::string inductor =
      "Traceback (most recent call last):\n"
      "  File \"/home/u/run.py\", line 3, in <module>\n"
      "    y = f(x)\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/torch/_inductor/lowering.py\", line 412, in wrapped\n"
      "    assert len(args) == 2\n"
      "AssertionError\n";
  EXPECT_EQ(SysJudge(inductor).verdict, Verdict::kCrashed) << ToJson(SysJudge(inductor)).dump();
  const std::string own =
      "Traceback (most recent call last):\n"
      "  File \"/home/u/test_gemm.py\", line 30, in test_gemm\n"
      "    assert torch.allclose(out, ref)\n"
      "AssertionError\n";
  EXPECT_EQ(SysJudge(own).verdict, Verdict::kWrongOutput);
}

TEST(System, NodeAndFabricFaultsAreInfraErrors) {
  for (const char* log : {
           "RuntimeError: CUDA error: system not yet initialized\n",
           "cudaErrorSystemNotReady: system not yet initialized\n",
           "RuntimeError: CUDA error: uncorrectable NVLink error was detected during the execution\n",
           "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<55362> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n",
           "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n",
           "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-x (size 9637888)\n",
           "[  123.4] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n",
       }) {
    SCOPED_TRACE(log);
    Classification c = SysJudge(log);
    EXPECT_EQ(c.verdict, Verdict::kInfraError) << ToJson(c).dump();
  }
  // Naming the fabric manager in passing is no fault.
  EXPECT_EQ(SysJudge("starting with fabric manager version 580.1\n", 0).verdict, Verdict::kPassed);
}

TEST(Deadlines, AProgramThatGaveUpWaitingTimedOut) {
  for (const char* log : {
           "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.\n",
           "RuntimeError: Timed out initializing process group in store based barrier on rank 0, for key: store_based_barrier_key:1\n",
           "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect\n",
           "RuntimeError: DataLoader timed out after 5 seconds\n",
           "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n",
       }) {
    SCOPED_TRACE(log);
    Classification c = SysJudge(log);
    EXPECT_EQ(c.verdict, Verdict::kTimeout) << ToJson(c).dump();
  }
  // A timeout named in a configuration line decides nothing.
  EXPECT_EQ(SysJudge("INFO timeout=1800 timed out retries=3\n", 0).verdict, Verdict::kPassed);
}

TEST(Basis, EveryVerdictSaysWhatItWasJudgedFrom) {
  EXPECT_EQ(SysJudge("hello\n", 1).basis, Basis::kExitStatus);
  EXPECT_TRUE(Unclassified(SysJudge("hello\n", 1).verdict, SysJudge("hello\n", 1).basis));
  EXPECT_EQ(SysJudge("hello\n", 1).evidence, "hello");  // the line it would have used
  EXPECT_EQ(SysJudge("RuntimeError: boom\n").basis, Basis::kException);
  EXPECT_EQ(SysJudge("RuntimeError: CUDA error: an illegal memory access was encountered\n").basis, Basis::kStatus);
  EXPECT_EQ(SysJudge("Result = FAIL\n").basis, Basis::kRunner);  // the kernel projects' result line is a report
  EXPECT_EQ(SysJudge("max difference 0.5 exceeds 0.001\n").basis, Basis::kMessage);
  EXPECT_EQ(ClassifyText("", {.signal = 11}).basis, Basis::kStatus);  // a crash signal says what happened
  EXPECT_EQ(ClassifyText("", {.timed_out = true}).basis, Basis::kWorker);
  EXPECT_FALSE(Unclassified(Verdict::kPassed, Basis::kExitStatus));
  nlohmann::json j = ToJson(SysJudge("hello\n", 3));
  EXPECT_EQ(j["basis"], "exit_status");
  EXPECT_EQ(j["unclassified"], true);
  const SignatureRule rule{"boom", false, Verdict::kOom, "oom:mine"};
  EXPECT_EQ(ClassifyText("boom\n", ExitCode(1), {rule}).basis, Basis::kSuiteRule);
}

TEST(RunnerOutcomes, AnXpassOrXfailReasonIsTheSuitesExpectationNotAFailure) {
  // pytest -ra's short summary repeats the xfail marker's reason, which may name an arch.
  const std::string log =
      "tests/test_fp4.py::test_nvfp4 XPASS (requires sm_100) [ 50%]\n"
      "tests/test_fp4.py::test_fp8 PASSED [100%]\n"
      "=========================== short test summary info ============================\n"
      "XPASS tests/test_fp4.py::test_nvfp4 requires sm_100\n"
      "========================= 1 passed, 1 xpassed in 0.10s =========================\n";
  Classification c = SysJudge(log, 0);
  EXPECT_EQ(c.verdict, Verdict::kPassed) << ToJson(c).dump();
  std::optional<TestReport> r = [&] {
    Classifier cl;
    cl.Feed(log);
    return cl.Tests();
  }();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->counts.xpassed, 1);
  EXPECT_EQ(r->counts.passed, 1);
  const std::string xfail =
      "XFAIL tests/test_fp4.py::test_nvfp4 - only supported on SM100\n"
      "========================= 1 passed, 1 xfailed in 0.10s =========================\n";
  EXPECT_EQ(SysJudge(xfail, 0).verdict, Verdict::kPassed) << ToJson(SysJudge(xfail, 0)).dump();
}

// The runner catalog through the whole classifier (classifier/test_runners.cc): each runner's own
// report decides, in the shapes its source prints (CMake's cmCTestRunTest.cxx, Catch2's and doctest's
// console reporters, libtest's pretty formatter, go's testing.go, unittest's runner.py).
TEST(RunnerCatalog, EachRunnersReportDecides) {
  struct Case {
    const char* log;
    int exit_code;
    Verdict want;
  };
  const Case cases[] = {
      // CTest: a test skipped through SKIP_RETURN_CODE is a skip, whatever "100% tests passed" says.
      {"Test project /b\n    Start 1: fp8_gemm\n1/1 Test #1: fp8_gemm .........................***Skipped   0.01 sec\n\n"
       "100% tests passed, 0 tests failed out of 1\n\nTotal Test time (real) =   0.02 sec\n\nThe following tests did not run:\n"
       "\t  1 - fp8_gemm (Skipped)\n",
       0, Verdict::kUnsupported},
      // CTest with --output-on-failure: the test printed a mismatch and failed.
      {"Test project /b\n    Start 1: gemm_check\n1/1 Test #1: gemm_check .......................***Failed    0.20 sec\n"
       "mismatch at index 17: expected 3.0, got 2.5\n\n0% tests passed, 1 tests failed out of 1\n\n"
       "The following tests FAILED:\n\t  1 - gemm_check (Failed)\n",
       8, Verdict::kWrongOutput},
      {"Test project /b\n    Start 1: slow\n1/1 Test #1: slow .............................***Timeout 1500.05 sec\n\n"
       "0% tests passed, 1 tests failed out of 1\n\nThe following tests FAILED:\n\t  1 - slow (Timeout)\n",
       8, Verdict::kTimeout},
      // Catch2 v3: a failed REQUIRE with its expansion.
      {"Randomness seeded to: 42\n\n---------------------------------------------------------------------------\n"
       "gemm matches the reference\n---------------------------------------------------------------------------\n"
       "test.cpp:10\n...............................................................................\n\n"
       "test.cpp:12: FAILED:\n  REQUIRE( out == ref )\nwith expansion:\n  2 == 3\n\n"
       "===============================================================================\n"
       "test cases: 1 | 1 failed\nassertions: 1 | 1 failed\n\n",
       42, Verdict::kWrongOutput},
      // Rust: an assertion of equality failed.
      {"running 1 test\ntest tests::argmin ... FAILED\n\nfailures:\n\n---- tests::argmin stdout ----\n"
       "thread 'tests::argmin' panicked at src/lib.rs:10:5:\nassertion `left == right` failed\n  left: 1\n right: 2\n\n"
       "failures:\n    tests::argmin\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
       "finished in 0.00s\n\n",
       101, Verdict::kWrongOutput},
      // go test: everything passed.
      {"=== RUN   TestGemm\n--- PASS: TestGemm (0.00s)\nPASS\nok  \texample.com/gemm\t0.012s\n", 0, Verdict::kPassed},
      // unittest: one skip for the hardware, the rest passed.
      {"test_fp8 (test_k.TestK.test_fp8) ... skipped 'requires sm_90'\ntest_fp16 (test_k.TestK.test_fp16) ... ok\n\n"
       "----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nOK (skipped=1)\n",
       0, Verdict::kUnsupported},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.log);
    Classification got = SysJudge(c.log, c.exit_code);
    EXPECT_EQ(got.verdict, c.want) << ToJson(got).dump();
    EXPECT_EQ(got.basis, c.want == Verdict::kPassed ? Basis::kExitStatus : Basis::kRunner) << ToJson(got).dump();
  }
}

// A value of a status vocabulary named on a line decides by its table (classifier/status/).
TEST(StatusVocabularies, ALogThatNamesAValueIsJudgedByIt) {
  struct Case {
    const char* log;
    Verdict want;
    const char* signature;
  };
  const Case cases[] = {
      {"torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error "
       "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nncclSystemError: System call (e.g. socket, malloc) "
       "or external library call failed or device error.\n",
       Verdict::kInfraError, "infra_error:nccl:ncclSystemError"},
      {"RuntimeError: CUDA error: invalid argument\n", Verdict::kCrashed, "crashed:cuda_runtime:cudaErrorInvalidValue"},
      {"cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
       "insufficient for CUDA runtime version\n",
       Verdict::kInfraError, "infra_error:driver_mismatch"},
      {"RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n", Verdict::kCrashed, "crashed:cudnn:CUDNN_STATUS_EXECUTION_FAILED"},
      {"OSError: [Errno 5] Input/output error: '/data/ckpt.pt'\n", Verdict::kInfraError, "infra_error:errno:EIO"},
      {"jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses\n", Verdict::kInfraError,
       "infra_error:absl:UNAVAILABLE"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.log);
    Classification got = SysJudge(c.log);
    EXPECT_EQ(got.verdict, c.want) << ToJson(got).dump();
    EXPECT_EQ(got.signature, c.signature) << ToJson(got).dump();
    EXPECT_EQ(got.basis, Basis::kStatus);
  }
  // A status named at INFO level, or only "cuda" in passing, decides nothing.
  EXPECT_EQ(SysJudge("INFO 12-07 cuda graph capture finished (cudaErrorNotReady polled)\n", 0).verdict, Verdict::kPassed);
}

// A native program that stopped itself says so in its runtime's words: a crash with a reason, not
// the exit status alone (glog/absl CHECK, libstdc++'s terminate handler, Rust's and Go's panics).
TEST(NativeCrashes, TheRuntimesOwnWordsGiveTheReason) {
  struct Case {
    const char* log;
    const char* signature;
  };
  const Case cases[] = {
      {"F1207 12:00:00.000000  4242 gpu_compiler.cc:123] Check failed: shape.IsArray() \n", "crashed:check_failed:shape.IsArray()"},
      {"terminate called after throwing an instance of 'std::runtime_error'\n  what():  grammar parse error\n",
       "crashed:cpp_exception:grammar parse error"},
      {"thread 'main' panicked at src/main.rs:4:5:\ncalled `Result::unwrap()` on an `Err` value: Io\n", "crashed:panic"},
      {"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n", "crashed:panic"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.log);
    Classification got = ClassifyText(c.log, ExitSignal(6));
    EXPECT_EQ(got.verdict, Verdict::kCrashed) << ToJson(got).dump();
    EXPECT_EQ(got.signature, c.signature) << ToJson(got).dump();
    EXPECT_EQ(got.basis, Basis::kMessage);
  }
  // A what() that names a CUDA status is judged by the status.
  Classification oom = ClassifyText("terminate called after throwing an instance of 'c10::Error'\n"
                                    "  what():  CUDA error: out of memory\n", ExitSignal(6));
  EXPECT_EQ(oom.verdict, Verdict::kOom) << ToJson(oom).dump();
}

// A runner's report cut short (no closing summary) still names its failed case: the runner's word
// decides over the exit status alone.
TEST(RunnerCatalog, ACutReportsFailedCaseDecides) {
  const std::string cut =
      "Randomness seeded to: 7\n\n"
      "-------------------------------------------------------------------------------\n"
      "softmax matches the reference\n"
      "-------------------------------------------------------------------------------\n"
      "softmax_test.cpp:30\n"
      "...............................................................................\n\n"
      "softmax_test.cpp:41: FAILED:\n  CHECK( out[i] == Approx( ref[i] ) )\nwith expansion:\n  0.25f == Approx( 0.5 )\n\n";
  Classification c = SysJudge(cut, 1);
  EXPECT_EQ(c.verdict, Verdict::kWrongOutput) << ToJson(c).dump();
  EXPECT_EQ(c.basis, Basis::kRunner);
  // A cut report with passes only says nothing about why the run failed.
  EXPECT_EQ(SysJudge("running 2 tests\ntest a ... ok\n", 1).signature, "crashed:exit_code:1");
}

// More of the tools' documented words: numpy's and torch.testing's detail lines, GoogleTest's boolean
// checks, Go's got/want, CI systems' time limits, TensorFlow's OOM, NVML without a driver.
TEST(DocumentedWords, EachToolsMessageGivesItsVerdict) {
  struct Case {
    const char* log;
    int exit_code;
    Verdict want;
  };
  const Case cases[] = {
      {"Max absolute difference: 0.5\nMax relative difference: 1.\n", 1, Verdict::kWrongOutput},
      {"Greatest absolute difference: 0.25 at index (3,) (up to 1e-05 allowed)\n", 1, Verdict::kWrongOutput},
      {"test.cc:20: Failure\nValue of: ok\n  Actual: false\nExpected: true\n", 1, Verdict::kWrongOutput},
      {"    gemm_test.go:31: got 3.5, want 4\n", 1, Verdict::kWrongOutput},
      {"##[error]The job running on runner gpu-3 has exceeded the maximum execution time of 360 minutes.\n", 1,
       Verdict::kTimeout},
      {"slurmstepd: error: *** JOB 4242 ON node17 CANCELLED AT 2026-12-07T10:00:00 DUE TO TIME LIMIT ***\n", 1,
       Verdict::kTimeout},
      {"E       Failed: Timeout >300.0s\n", 1, Verdict::kTimeout},
      {"tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,1024]\n",
       1, Verdict::kOom},
      {"Failed to initialize NVML: Driver/library version mismatch\n", 1, Verdict::kInfraError},
      {"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", 1, Verdict::kInfraError},
      {"RuntimeError: DataLoader worker (pid 1234) is killed by signal: Bus error. It is possible that dataloader's "
       "workers are out of shared memory. Please try to raise your shared memory limit.\n",
       1, Verdict::kInfraError},
      {"numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library cannot be found.\n", 1,
       Verdict::kInfraError},
      {"numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuMemcpyDtoH results in UNKNOWN_CUDA_ERROR\n", 1,
       Verdict::kCrashed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.log);
    Classification got = SysJudge(c.log, c.exit_code);
    EXPECT_EQ(got.verdict, c.want) << ToJson(got).dump();
  }
  // Prose with the same words decides nothing.
  EXPECT_EQ(SysJudge("if you got time, want to help? see CONTRIBUTING\n", 1).signature, "crashed:exit_code:1");
}

// An architecture refusal phrased as a failed check: TORCH_CHECK's own message when the check has
// none ("Expected <cond> to be true, but got false") with an arch in the condition.
TEST(ArchGate, AFailedCheckThatNamesTheArchIsARefusal) {
  Classification c = SysJudge("RuntimeError: Expected is_sm90 || is_sm8x to be true, but got false.  (Could this error "
                              "message be improved?  If so, please report an enhancement request to PyTorch.)\n");
  EXPECT_EQ(c.verdict, Verdict::kUnsupported) << ToJson(c).dump();
  // Without an arch it is the program's own invariant: a crash.
  EXPECT_EQ(SysJudge("RuntimeError: Expected q.is_contiguous() to be true, but got false.\n").verdict, Verdict::kCrashed);
}

// A result said to be wrong in plain words, and nccl-tests' own check of a collective's output.
TEST(FailedChecks, AResultSaidToBeWrongIsAWrongResult) {
  for (const char* log : {"#  Out of bounds values : 3 FAILED\n", "gemm: incorrect results for m=127 n=63\n",
                          "output does not match the reference (max err 0.5)\n"}) {
    SCOPED_TRACE(log);
    EXPECT_EQ(SysJudge(log).verdict, Verdict::kWrongOutput) << ToJson(SysJudge(log)).dump();
  }
  EXPECT_EQ(SysJudge("#  Out of bounds values : 0 OK\n", 0).verdict, Verdict::kPassed);
  // A warning of what might happen is no result.
  EXPECT_EQ(SysJudge("UserWarning: TF32 may produce incorrect results for this matmul\n").signature, "crashed:exit_code:1");
}

// A checker's report names the fault; HIP's missing code object is CUDA's missing kernel image.
TEST(DocumentedWords, SanitizersAndHipSayWhatHappened) {
  EXPECT_EQ(SysJudge("==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014\n").signature,
            "crashed:sanitizer:heap-buffer-overflow");
  EXPECT_EQ(SysJudge("========= Invalid __global__ read of size 4 bytes\n=========     at vec_add+0x70\n"
                     "========= ERROR SUMMARY: 1 error\n").verdict,
            Verdict::kCrashed);
  EXPECT_EQ(SysJudge("========= ERROR SUMMARY: 0 errors\n", 0).verdict, Verdict::kPassed);
  EXPECT_EQ(SysJudge("\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"\n").verdict,
            Verdict::kUnsupported);
}
