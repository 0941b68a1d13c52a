#!/usr/bin/env python3
"""One torch-sdpa trial: run scaled_dot_product_attention with exactly one PyTorch SDPA backend
and compare it with the MATH backend in float64 on the same inputs.

Exit codes (also written to GAUNTLET_RESULT_FILE as the verdict):
  0 passed, 3 unsupported (PyTorch refused the backend for these inputs),
  4 wrong_output (error over tolerance or non-finite output), 5 no GPU / no PyTorch CUDA.
Anything else (a crash, CUDA OOM) propagates as a traceback and a non-zero exit for the worker's
classifier. Prints one JSON line.
"""
import argparse
import json
import math
import os
import sys
import warnings

BACKENDS = ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"]
# ||out - ref|| / ||ref|| limits: inputs are rounded to the dtype, and the kernels accumulate
# in fp32 but round P (softmax) to the dtype before P@V; bf16 has 8 mantissa bits, fp16 11.
TOLERANCE = {"bf16": 2e-2, "fp16": 4e-3, "fp32": 1e-4}
# How the backend is asked for. `sdpa_kernel`: forced alone (PyTorch refuses when it cannot run it).
# `flags`: what many programs do instead, torch.backends.cuda.enable_<backend>_sdp(True) with the
# other backends left as they are: PyTorch then picks by its own priority and falls back silently
# when the asked backend cannot take the inputs. Only the kernel record (the suite's `dispatch`
# expectation) can tell which one ran.
SELECT = ["sdpa_kernel", "flags"]
FLAG = {"FLASH_ATTENTION": "enable_flash_sdp", "EFFICIENT_ATTENTION": "enable_mem_efficient_sdp",
        "CUDNN_ATTENTION": "enable_cudnn_sdp", "MATH": "enable_math_sdp"}


def write_result(verdict, metrics, detail):
    path = os.environ.get("GAUNTLET_RESULT_FILE")
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"verdict": verdict, "metrics": metrics, "detail": detail}, f)
    os.replace(tmp, path)


def finish(record, verdict, code, detail="", metrics=None):
    record["verdict"] = verdict
    if detail:
        record["detail"] = detail
    write_result(verdict, metrics or {}, detail)
    print(json.dumps(record), flush=True)
    if code == 3:
        print(f"torch_sdpa: unsupported: {detail}", file=sys.stderr)
    elif code == 4:
        print(f"torch_sdpa: over tolerance: {detail}", file=sys.stderr)
    return code


def fingerprint():
    import torch
    fp = {"torch": torch.__version__, "cuda": torch.version.cuda,
          "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
          "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    print(json.dumps(fp))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fingerprint", action="store_true", help="print software versions as JSON and exit")
    ap.add_argument("--backend", choices=BACKENDS)
    ap.add_argument("--dtype", choices=sorted(TOLERANCE))
    ap.add_argument("--head-dim", type=int)
    ap.add_argument("--select", choices=SELECT, default="sdpa_kernel")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.fingerprint:
        return fingerprint()
    if not (args.backend and args.dtype and args.head_dim):
        ap.error("--backend, --dtype and --head-dim are required")

    record = {"backend": args.backend, "dtype": args.dtype, "head_dim": args.head_dim, "batch": args.batch,
              "heads": args.heads, "seq": args.seq, "causal": args.causal, "select": args.select}
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        return finish(record, "infra_error", 5, f"PyTorch not importable: {e}")
    if not torch.cuda.is_available():
        return finish(record, "infra_error", 5, "no GPU: torch.cuda.is_available() is False")
    record["gpu"] = torch.cuda.get_device_name(0)
    record["torch"] = torch.__version__

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    g = torch.Generator(device="cuda").manual_seed(args.seed)
    shape = (args.batch, args.heads, args.seq, args.head_dim)
    # Fresh random inputs, rounded to the dtype first so the float64 reference sees the same values.
    q, k, v = (torch.randn(shape, device="cuda", generator=g).to(dtype) for _ in range(3))
    backend = getattr(SDPBackend, args.backend)

    def run():
        if args.select == "flags":
            return F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)

    if args.select == "flags":
        getattr(torch.backends.cuda, FLAG[args.backend])(True)

    # A refusal is a RuntimeError ("No available kernel") preceded by UserWarnings saying why.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = run()
            torch.cuda.synchronize()
        except RuntimeError as e:
            msg = str(e)
            if "No available kernel" in msg or "not supported" in msg.lower():
                reasons = "; ".join(str(w.message).strip().replace("\n", " ") for w in caught)
                return finish(record, "unsupported", 3, f"{msg.strip()} {reasons}".strip())
            raise

    with sdpa_kernel([SDPBackend.MATH]):
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=args.causal)
    outd = out.double()
    finite = bool(torch.isfinite(outd).all())
    rel = float(torch.linalg.vector_norm(outd - ref) / torch.linalg.vector_norm(ref)) if finite else math.inf
    max_abs = float((outd - ref).abs().max()) if finite else math.inf

    # Timing: CUDA events around each run after a warm-up; the median is reported.
    for _ in range(3):
        run()
    times = []
    for _ in range(args.iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        o = run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    ms = times[len(times) // 2]
    flops = 4.0 * args.batch * args.heads * args.seq * args.seq * args.head_dim * (0.5 if args.causal else 1.0)
    tflops = flops / (ms * 1e-3) / 1e12
    tol = TOLERANCE[args.dtype]
    record.update({"rel_err": rel if finite else None, "max_abs_err": max_abs if finite else None,
                   "tolerance": tol, "ms": ms, "tflops": tflops})
    metrics = {"ms": {"value": ms, "unit": "ms"}, "tflops": {"value": tflops, "unit": "TFLOP/s"},
               "rel_err": {"value": rel if finite else None, "unit": ""}}
    if not finite:
        return finish(record, "wrong_output", 4, "output has NaN/Inf", metrics)
    if rel > tol:
        return finish(record, "wrong_output", 4, f"rel_err {rel:.3g} > tolerance {tol:g}", metrics)
    return finish(record, "passed", 0, "", metrics)


if __name__ == "__main__":
    sys.exit(main())
