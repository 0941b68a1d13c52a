#!/usr/bin/env python3
"""torch-sdpa's probe stage: ask PyTorch itself whether it would run one SDPA backend on this
trial's inputs, before the trial runs it (SUITE_FORMAT.md "probe stages").

PyTorch answers through torch.backends.cuda.can_use_flash_attention / can_use_efficient_attention /
can_use_cudnn_attention(SDPAParams(q, k, v, mask, dropout, is_causal, enable_gqa), debug=True): a
bool, and with debug=True a warning per constraint the inputs break ("Flash attention requires the
last dimension of query to be at most 256 ..."). Those warnings are the answer's reason. MATH has no
such check: it is the backend PyTorch takes anything with, so it is declared supported.

Prints its answer as the last stdout line: {"supported": bool, "reason": "..."}. Exit 0 whenever it
answered; anything else (no PyTorch, no GPU) is the probe failing, which the worker records as
infra_error, never as the config's verdict. The inputs are the trial's own (torch_sdpa.py's shapes
and seed), so the question is about exactly what the next stage runs.
"""
import argparse
import json
import os
import sys
import tempfile
import warnings

CHECKS = {"FLASH_ATTENTION": "can_use_flash_attention", "EFFICIENT_ATTENTION": "can_use_efficient_attention",
          "CUDNN_ATTENTION": "can_use_cudnn_attention"}


def ask(check, params):
    """Calls check(params, debug=True), returning (answer, what it warned). PyTorch's C++ warnings
    reach Python's warnings module from some bindings and stderr from others, so both are caught;
    the stderr copy is taken off fd 2 itself, where the C++ side writes."""
    with tempfile.TemporaryFile(mode="w+b") as err, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            answer = bool(check(params, debug=True))
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    sys.stderr.write(text)  # into the trial log as PyTorch printed it
    lines = [str(w.message).strip().replace("\n", " ") for w in caught]
    lines += [ln.strip() for ln in text.splitlines() if "Warning" in ln or "requires" in ln or "Expected" in ln]
    seen, out = set(), []
    for ln in lines:
        if ln and ln not in seen:
            seen.add(ln)
            out.append(ln)
    return answer, "; ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", required=True)
    ap.add_argument("--dtype", required=True, choices=["bf16", "fp16", "fp32"])
    ap.add_argument("--head-dim", type=int, required=True)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--causal", action="store_true")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("torch_sdpa_probe: no GPU: torch.cuda.is_available() is False", file=sys.stderr)
        return 5
    if args.backend == "MATH":
        print(json.dumps({"supported": True, "reason": "MATH is PyTorch's reference backend: it takes any input"}))
        return 0
    check = getattr(torch.backends.cuda, CHECKS[args.backend], None)
    if check is None:
        print(f"torch_sdpa_probe: PyTorch {torch.__version__} has no torch.backends.cuda.{CHECKS[args.backend]}", file=sys.stderr)
        return 5
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    shape = (args.batch, args.heads, args.seq, args.head_dim)
    q, k, v = (torch.empty(shape, device="cuda", dtype=dtype) for _ in range(3))
    try:
        params = torch.backends.cuda.SDPAParams(q, k, v, None, 0.0, args.causal, False)
    except TypeError:  # PyTorch before 2.5 has no enable_gqa
        params = torch.backends.cuda.SDPAParams(q, k, v, None, 0.0, args.causal)
    supported, reason = ask(check, params)
    print(json.dumps({"supported": supported, "reason": reason}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
