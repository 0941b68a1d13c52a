// The shapes a final exception takes in real logs (classifier/traceback.h): module-qualified
// names, wrappers whose cause or message is on the next line, causes carried in a wrapper's
// message, exception groups. Each test feeds the tracker line by line and checks which line
// completes which exception.
#include <gtest/gtest.h>

#include <vector>

#include "classifier/traceback.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using Role = TracebackTracker::Role;

namespace {

// Feeds `lines` and returns the roles, so a test states the whole sequence at once.
std::vector<Role> Feed(TracebackTracker& t, const std::vector<std::string_view>& lines) {
  std::vector<Role> roles;
  for (auto l : lines) roles.push_back(t.Observe(l));
  return roles;
}

}  // namespace

TEST(ExceptionLine, ModuleQualifiedNamesWithoutErrorSuffix) {
  auto e = ParseExceptionLine("torch._dynamo.exc.InvalidBackend: Invalid backend: 'tvmx'");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "InvalidBackend");
  EXPECT_EQ(e->message, "Invalid backend: 'tvmx'");
  auto j = ParseExceptionLine("jax._src.source_info_util.JaxStackTraceBeforeTransformation: NotImplementedError: x");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->type, "JaxStackTraceBeforeTransformation");
  // A lowercase last component, no colon, or no module path is not an exception class.
  EXPECT_FALSE(ParseExceptionLine("torch.distributed.run: starting 8 workers"));
  EXPECT_FALSE(ParseExceptionLine("torch._dynamo.exc.InvalidBackend raised while compiling"));
  EXPECT_FALSE(ParseExceptionLine("Loading: model"));
  EXPECT_FALSE(ParseExceptionLine("Model.Layers: 32"));
}

TEST(ExceptionLine, UnwrapsACauseCarriedInTheMessage) {
  auto e = UnwrapCause(*ParseExceptionLine(
      "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Cannot find a working "
      "triton installation."));
  EXPECT_EQ(e.type, "RuntimeError");
  EXPECT_EQ(e.message, "Cannot find a working triton installation.");
  e = UnwrapCause(*ParseExceptionLine(
      "jax._src.source_info_util.JaxStackTraceBeforeTransformation: NotImplementedError: no lowering"));
  EXPECT_EQ(e.type, "NotImplementedError");
  // A bare "Error:" / "Exception:" at the start of a message is a word, not a cause.
  EXPECT_EQ(UnwrapCause(*ParseExceptionLine("RuntimeError: Error: boom")).type, "RuntimeError");
  EXPECT_EQ(UnwrapCause(*ParseExceptionLine("Exception: Capture cuda graph failed: OOM")).type, "Exception");
  // "raised:" with nothing after it leaves the wrapper, whose cause comes on the next line.
  EXPECT_EQ(UnwrapCause(*ParseExceptionLine("BackendCompilerFailed: backend='tvm' raised:")).type,
            "BackendCompilerFailed");
}

TEST(ExceptionLine, WrappersAreConsequences) {
  EXPECT_TRUE(IsWrapperException({"ExceptionGroup", "unhandled errors in a TaskGroup (1 sub-exception)"}));
  EXPECT_TRUE(IsWrapperException({"BackendCompilerFailed", "backend='tvm' raised:"}));
  EXPECT_TRUE(IsWrapperException({"SimplifiedTraceback", "For simplicity, JAX has removed its internal frames"}));
  EXPECT_FALSE(IsWrapperException({"RuntimeError", "boom"}));
}

TEST(Traceback, RaisedWrapperTakesItsCauseFromTheNextLine) {
  TracebackTracker t;
  auto roles = Feed(t, {"Traceback (most recent call last):", "  File \"/t/output_graph.py\", line 9, in call",
                        "torch._dynamo.exc.BackendCompilerFailed: backend='tvm' raised:"});
  EXPECT_EQ(roles.back(), Role::kException);
  EXPECT_EQ(t.exception().type, "BackendCompilerFailed");
  EXPECT_TRUE(t.open()) << "the cause is still to come";
  EXPECT_EQ(t.Observe("ModuleNotFoundError: No module named 'tvm'"), Role::kException);
  EXPECT_EQ(t.exception().type, "ModuleNotFoundError");
  EXPECT_EQ(t.exception().message, "No module named 'tvm'");
  EXPECT_FALSE(t.exception_continued()) << "the cause line is itself the exception line";
  EXPECT_EQ(t.innermost_file(), "output_graph.py");
  EXPECT_EQ(t.Observe("Set TORCH_LOGS=\"+dynamo\" for more information"), Role::kNone);
  EXPECT_FALSE(t.open());
}

TEST(Traceback, EmptyMessageContinuesOnTheNextLine) {
  TracebackTracker t;
  Feed(t, {"Traceback (most recent call last):", "  File \"/t/import_utils.py\", line 1, in requires_backends"});
  EXPECT_EQ(t.Observe("ImportError: "), Role::kException);
  EXPECT_EQ(t.exception().message, "");
  EXPECT_EQ(t.Observe("LlamaTokenizer requires the SentencePiece library but it was not found."), Role::kException);
  EXPECT_EQ(t.exception().type, "ImportError");
  EXPECT_EQ(t.exception().message, "LlamaTokenizer requires the SentencePiece library but it was not found.");
  EXPECT_TRUE(t.exception_continued());
  EXPECT_EQ(t.Observe("installation page of its repo: https://github.com/google/sentencepiece"), Role::kNone)
      << "only the first line continues the message";
}

TEST(Traceback, WhatDoesNotContinueAnException) {
  // torchrun's ChildFailedError is followed by a separator; a bare KeyboardInterrupt has no colon.
  TracebackTracker t;
  Feed(t, {"Traceback (most recent call last):", "  File \"/t/api.py\", line 1, in launch_agent"});
  EXPECT_EQ(t.Observe("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "), Role::kException);
  EXPECT_EQ(t.Observe("============================================================"), Role::kOther);
  EXPECT_EQ(t.exception().message, "");
  EXPECT_FALSE(t.open());

  Feed(t, {"Traceback (most recent call last):", "  File \"/t/run.py\", line 1, in main"});
  EXPECT_EQ(t.Observe("KeyboardInterrupt"), Role::kException);
  EXPECT_EQ(t.Observe(""), Role::kNone);
  EXPECT_FALSE(t.open());

  // A message that ends with ':' takes only a cause, never plain text (Triton's "at 34:12:" is
  // followed by the kernel source); an INFO line never continues anything.
  Feed(t, {"Traceback (most recent call last):", "  File \"/t/compiler.py\", line 1, in compile"});
  EXPECT_EQ(t.Observe("triton.compiler.errors.CompilationError: at 34:12:"), Role::kException);
  EXPECT_EQ(t.Observe("        a = tl.load(a_ptrs)"), Role::kOther);
  EXPECT_EQ(t.exception().message, "at 34:12:");
  Feed(t, {"Traceback (most recent call last):", "  File \"/t/x.py\", line 1, in f"});
  EXPECT_EQ(t.Observe("ImportError:"), Role::kException);
  EXPECT_EQ(t.Observe("Loading weights", LogLevel::kInfo), Role::kOther);
  EXPECT_EQ(t.exception().message, "");
}

TEST(Traceback, ExceptionGroupGutter) {
  TracebackTracker t;
  auto roles = Feed(t, {"  + Exception Group Traceback (most recent call last):",
                        "  |   File \"/w/main.py\", line 141, in <module>", "  |     asyncio.run(main(args))",
                        "  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)",
                        "  +-+---------------- 1 ----------------", "    | Traceback (most recent call last):",
                        "    |   File \"/w/engine.py\", line 52, in build", "    | NotImplementedError: fp8 kv cache"});
  EXPECT_EQ(roles, (std::vector<Role>{Role::kOpener, Role::kFrame, Role::kBody, Role::kException, Role::kBody,
                                      Role::kOpener, Role::kFrame, Role::kException}));
  EXPECT_EQ(t.exception().type, "NotImplementedError");
  EXPECT_EQ(t.innermost_file(), "engine.py");
  // A sub-exception raised without a traceback prints only its exception line.
  EXPECT_EQ(t.Observe("    +---------------- 2 ----------------"), Role::kBody);
  EXPECT_EQ(t.Observe("    | ValueError: page_size must be a multiple of 16"), Role::kException);
  EXPECT_EQ(t.exception().type, "ValueError");
  EXPECT_EQ(t.Observe("    +------------------------------------"), Role::kBody);
  EXPECT_TRUE(t.open());
  EXPECT_EQ(t.Observe("[serve-bench] done"), Role::kNone) << "a line without gutter ends the group";
  EXPECT_FALSE(t.open());
}

// Issue 29: an exception is judged by what it is wherever it appears, also without a traceback.
TEST(Traceback, AnExceptionLineWithoutTracebackIsAnException) {
  TracebackTracker t;
  EXPECT_EQ(t.Observe("NotImplementedError: The head dim must be <= 256"), Role::kException);
  EXPECT_EQ(t.exception().type, "NotImplementedError");
  EXPECT_EQ(t.exception().message, "The head dim must be <= 256");
  EXPECT_EQ(t.innermost_file(), "") << "no frame was printed";
  // Not exceptions: a bare word, a warning category, a log line at WARNING, an indented line.
  TracebackTracker u;
  EXPECT_EQ(u.Observe("Error: disk almost full"), Role::kNone);
  EXPECT_EQ(u.Observe("UserWarning: TypedStorage is deprecated"), Role::kNone);
  EXPECT_EQ(u.Observe("RuntimeError: retrying", LogLevel::kWarning), Role::kNone);
  EXPECT_EQ(u.Observe("    ValueError: in a code listing"), Role::kNone);
  EXPECT_EQ(u.Observe("KeyboardInterrupt"), Role::kNone) << "a lone name is no report";
}

// NCCL's message spans lines that look like exceptions of their own; they continue the first.
TEST(Traceback, TheLineAfterAnExceptionContinuesItsMessage) {
  TracebackTracker t;
  EXPECT_EQ(t.Observe("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, remote process"),
            Role::kException);
  EXPECT_EQ(t.Observe("ncclRemoteError: A call failed possibly due to a network error"), Role::kBody);
  EXPECT_EQ(t.exception().type, "DistBackendError");
  EXPECT_FALSE(t.open());
}
