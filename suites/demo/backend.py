#!/usr/bin/env python3
"""SIMULATION for the README tour: no GPU, no SGLang, no FlashInfer is used or needed.

It is also the bring-up test fixture (tests/fixtures/bringup/fixture-bringup.json runs it, with the
architecture from the worker's GPU); suites/demo-bringup.json runs it on a CPU-only worker and passes
the architecture as the `arch` parameter, so a laptop shows a matrix with arch-dependent verdicts. The verdicts are scripted,
modelled on real Blackwell bring-up failures; they say nothing about real hardware.

Test fixture: a stand-in for an SGLang NVFP4 MoE bring-up, by backend and by architecture.

No GPU is touched. Each subcommand behaves the way the real MoE-runner and FP4-GEMM backends
behave on Blackwell (the failure texts are modelled on real logs; tests/classifier/ has them):

    backend.py gemm  --backend FP4_GEMM            [--arch sm_XY] [--startlog FILE]
    backend.py moe   --backend MOE_RUNNER          [--arch sm_XY] [--startlog FILE]
    backend.py serve --moe MOE_RUNNER --gemm FP4_GEMM [--arch sm_XY] [--startlog FILE]

The architecture is --arch when given and not empty (the CPU-only demo passes it as a parameter),
else GAUNTLET_GPU_ARCH, which the worker sets from the allocated GPU.

  gemm  below sm_100 (Hopper and older have no FP4 tensor cores): every backend refuses, exit 2.
        flashinfer_trtllm on anything but sm_100: FlashInfer's "requires sm_100a or sm_103a"
        refusal, exit 2 (unsupported). Otherwise: a kernel check passes and reports TFLOP/s.
  moe   flashinfer_trtllm on anything but sm_100: "trtllm-gen MoE kernels are SM100-only", a
        RuntimeError traceback (unsupported, by the suite's signature rule). Otherwise passes.
  serve flashinfer_cutedsl on sm_120: the server loads, then the first forward pass dies with
        CUTLASS "RuntimeError: Error Internal" (crashed). flashinfer_cudnn FP4 GEMM on sm_120: the
        server answers "!!!!..." and the smoke check fails (wrong_output). Otherwise the smoke
        answer is right and the last line carries the throughput in tok/s (passed).

--delay S: sleep S seconds first (the demo copy uses it so a sweep's progress is watchable).
--startlog: every start appends one JSON line {"trial", "stage", "arch", "config"} to FILE, so a
test can prove that a trial the scheduler settled never ran. Python 3 standard library only.
"""
import argparse
import json
import os
import sys
import time

# Output tokens/s by (moe, gemm) on a healthy run: made-up but stable, so a matrix shows a spread.
MOE_SPEED = {"flashinfer_cutlass": 1.00, "flashinfer_trtllm": 1.25, "flashinfer_cutedsl": 1.15, "triton": 0.70}
GEMM_SPEED = {"flashinfer_cutlass": 1.00, "flashinfer_cudnn": 1.05, "flashinfer_trtllm": 1.10}
ARCH_SPEED = {"sm_100": 2400.0, "sm_120": 1500.0, "sm_90": 900.0}


def cc(arch):
    digits = arch[3:] if arch.startswith("sm_") else ""
    return "%s.%s" % (digits[:-1], digits[-1]) if len(digits) >= 2 else "?"


def log_start(path, stage, arch, config):
    if not path:
        return
    line = json.dumps({"trial": os.environ.get("GAUNTLET_TRIAL_ID", ""), "stage": stage, "arch": arch,
                       "config": config}, sort_keys=True)
    # O_APPEND keeps concurrent writers' lines whole (each line is one short write).
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def metrics(**kv):
    print(json.dumps({"metrics": {k: {"value": v[0], "unit": v[1]} for k, v in kv.items()}}))


def gemm(a, arch):
    print("== mm_fp4 backend=%s m=256 n=4096 k=4096 (arch %s) ==" % (a.backend, arch), flush=True)
    if arch in ("sm_80", "sm_86", "sm_89", "sm_90"):
        print("RuntimeError: NVFP4 GEMM requires compute capability >= 10.0 (Blackwell); got %s" % arch,
              file=sys.stderr)
        return 2
    if a.backend == "flashinfer_trtllm" and arch != "sm_100":
        print("[FlashInfer] Error: FP4 GEMM with block scaling requires sm_100a or sm_103a; "
              "current device is %s" % arch, file=sys.stderr)
        return 2
    print("max rel err 3.1e-03 (tolerance 2.0e-02)")
    metrics(tflops=(round(ARCH_SPEED.get(arch, 500.0) / 4 * GEMM_SPEED.get(a.backend, 1.0), 1), "TFLOP/s"))
    return 0


def moe(a, arch):
    print("== fused MoE runner=%s experts=128 topk=8 (arch %s) ==" % (a.backend, arch), flush=True)
    if a.backend == "flashinfer_trtllm" and arch != "sm_100":
        print("Traceback (most recent call last):", file=sys.stderr)
        print('  File "/usr/local/lib/python3.12/dist-packages/flashinfer/fused_moe/core.py", line 1422, '
              "in check_trtllm_gen_support", file=sys.stderr)
        print("    raise RuntimeError(", file=sys.stderr)
        print("RuntimeError: trtllm-gen MoE kernels are SM100-only (compute capability 10.x), got SM%s (%s)"
              % (arch[3:], cc(arch)), file=sys.stderr)
        return 1
    print("fused MoE output matches the reference (max abs err 1.2e-02)")
    metrics(moe_us=(round(180.0 / MOE_SPEED.get(a.backend, 1.0), 1), "us"))
    return 0


def serve(a, arch):
    print("[server] --moe-runner-backend %s --fp4-gemm-backend %s --tp 1 (arch %s)" % (a.moe, a.gemm, arch))
    print("INFO:     Uvicorn running on http://127.0.0.1:%s (Press CTRL+C to quit)"
          % os.environ.get("GAUNTLET_PORT", "0"), flush=True)
    if a.moe == "flashinfer_cutedsl" and arch == "sm_120":
        # The first forward pass (CUDA graph capture) reaches the CuTe DSL grouped GEMM and dies.
        print("[TP0] Capture cuda graph begin. This can take up to several minutes.", file=sys.stderr)
        print("[TP0] Scheduler hit an exception: Traceback (most recent call last):", file=sys.stderr)
        print('  File "/sgl-workspace/sglang/python/sglang/srt/layers/moe/flashinfer_cutedsl_moe.py", line 212, '
              "in forward", file=sys.stderr)
        print("    out = grouped_gemm_nt_masked(hidden, w1, masked_m, sf_a, sf_b)", file=sys.stderr)
        print('  File "/usr/local/lib/python3.12/dist-packages/cutlass/cute/runtime.py", line 87, in __call__',
              file=sys.stderr)
        print("    raise RuntimeError(status)", file=sys.stderr)
        print("RuntimeError: Error Internal", file=sys.stderr)
        return 1
    answer = " Paris. It is known for the Eiffel Tower."
    if a.gemm == "flashinfer_cudnn" and arch == "sm_120":
        answer = "!!!!!!!!!!!!!!!!"
    print("prompt: 'The capital of France is'")
    print("completion: %r" % answer, flush=True)
    if "Paris" not in answer:
        print("Traceback (most recent call last):", file=sys.stderr)
        print('  File "/opt/gauntlet/smoke.py", line 34, in <module>', file=sys.stderr)
        print("    assert \"Paris\" in text, f\"expected 'Paris' in output, got {text!r}\"", file=sys.stderr)
        print("AssertionError: expected 'Paris' in output, got %r" % answer, file=sys.stderr)
        return 1
    tok_s = ARCH_SPEED.get(arch, 500.0) * MOE_SPEED.get(a.moe, 1.0) * GEMM_SPEED.get(a.gemm, 1.0)
    metrics(output_tok_s=(round(tok_s, 1), "tok/s"), ttft_ms=(round(90000.0 / tok_s, 1), "ms"))
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["gemm", "moe", "serve"])
    p.add_argument("--backend", default="")
    p.add_argument("--moe", default="")
    p.add_argument("--gemm", default="")
    p.add_argument("--arch", default="")
    p.add_argument("--startlog", default="")
    p.add_argument("--delay", type=float, default=0.0)
    a = p.parse_args()
    arch = a.arch or os.environ.get("GAUNTLET_GPU_ARCH", "")
    config = {"gemm": {"fp4_gemm_backend": a.backend}, "moe": {"moe_runner_backend": a.backend},
              "serve": {"moe_runner_backend": a.moe, "fp4_gemm_backend": a.gemm}}[a.what]
    log_start(a.startlog, a.what, arch, config)
    if a.delay > 0:
        time.sleep(a.delay)  # simulated work, demo only
    return {"gemm": gemm, "moe": moe, "serve": serve}[a.what](a, arch)


if __name__ == "__main__":
    sys.exit(main())
