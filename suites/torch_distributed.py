#!/usr/bin/env python3
"""One torch-distributed trial: NCCL collectives across the trial's GPUs, checked against one GPU.

Tests (--test):
  allreduce   all-reduce of --size-mb per rank: exact-sum check, then median time over --iters and
              the bus bandwidth (nccl-tests' busbw = algbw * 2(n-1)/n) as metrics.
  tp_matmul   a row-parallel (Megatron-style) matmul: each rank multiplies its K-slice of X and W,
              an all-reduce sums the partial products; the result is compared with the same matmul
              on one GPU and with a float64 reference, under a dtype tolerance.
  visibility  each rank records CUDA_VISIBLE_DEVICES, torch.cuda.device_count() and its device's
              UUID; the count must equal the devices CUDA_VISIBLE_DEVICES names (1 on a 1-GPU trial)
              and ranks must hold distinct GPUs. --hold-s keeps the GPU busy so trials overlap.
Faults (--fault, on --fault-rank): raise (a RuntimeError just before the collective) or hang (sleep
instead of entering it); the peers then wait in NCCL until --nccl-timeout-s, their watchdog aborts
them, and the launcher ends the hung rank.

Launch: as one rank of a gauntlet "ranks" stage (RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT
set by the worker, which prefixes each line "[rankN]: " and ends every rank when one fails), under
torchrun (the same variables), or on its own with --spawn N: torch.multiprocessing.spawn starts N
ranks and this program prefixes their lines itself.

Exit codes (rank 0 also writes GAUNTLET_RESULT_FILE): 0 passed, 3 unsupported, 4 wrong_output,
5 no GPU / no PyTorch CUDA / fewer GPUs than ranks. Anything else (a crash, an injected fault)
propagates as a traceback and a non-zero exit for the worker's classifier. Written for PyTorch 2.11.
"""
import argparse
import datetime
import json
import os
import sys
import time
import traceback

TOLERANCE = {"bf16": 1e-2, "fp16": 2e-3, "fp32": 1e-4}  # ||tp - ref|| / ||ref|| against float64
DTYPES = sorted(TOLERANCE)


class Exit(Exception):
    """A verdict this program decided (not a crash): raised by any rank, reported by rank 0."""

    def __init__(self, code, verdict, detail, signature=""):
        super().__init__(detail)
        self.code, self.verdict, self.detail, self.signature = code, verdict, detail, signature


class RankPrefix:
    """A stream that prefixes each line "[rankN]: " as torchrun does (used under --spawn only)."""

    def __init__(self, stream, rank):
        self.stream, self.prefix, self.at_start = stream, f"[rank{rank}]: ", True

    def write(self, text):
        out = []
        for piece in text.splitlines(keepends=True):
            if self.at_start:
                out.append(self.prefix)
            out.append(piece)
            self.at_start = piece.endswith("\n")
        self.stream.write("".join(out))
        return len(text)

    def flush(self):
        self.stream.flush()


def log(msg):
    print(f"torch_distributed: {msg}", flush=True)


def write_result(verdict, metrics, detail, signature=""):
    path = os.environ.get("GAUNTLET_RESULT_FILE")
    if not path:
        return
    doc = {"verdict": verdict, "metrics": metrics, "detail": detail}
    if signature:
        doc["signature"] = signature
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, path)


def device_uuid(torch, index):
    """nvidia-smi's form ("GPU-xxxxxxxx-..."); "unknown" if this PyTorch does not expose it."""
    u = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    if u is None:
        return "unknown"
    u = str(u)
    return u if u.startswith("GPU-") else "GPU-" + u


def inject(args, rank, where):
    """The fault, on the chosen rank, just before the collective `where`."""
    if args.fault == "none" or rank != args.fault_rank:
        return
    if args.fault == "raise":
        raise RuntimeError(f"injected fault: rank {rank} raises before the {where}")
    log(f"injected fault: rank {rank} hangs instead of entering the {where} (sleeping {args.hang_s:g} s)")
    time.sleep(args.hang_s)


def visibility(torch, args, rank, world, local_rank):
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    named = [d for d in cvd.split(",") if d.strip()]
    count = torch.cuda.device_count()
    info = {"rank": rank, "CUDA_VISIBLE_DEVICES": cvd, "device_count": count, "device": local_rank,
            "uuid": device_uuid(torch, local_rank), "visible_uuids": [device_uuid(torch, i) for i in range(count)],
            "name": torch.cuda.get_device_name(local_rank), "start": time.time()}
    # Keep the GPU busy for --hold-s so that two 1-GPU trials on one node provably overlap.
    x = torch.randn(2048, 2048, device="cuda")
    until = time.time() + args.hold_s
    while time.time() < until:
        x = (x @ x).clamp_(-1, 1)
        torch.cuda.synchronize()
    info["end"] = time.time()
    problems = []
    if named and count != len(named):
        problems.append(f"device_count() {count} but CUDA_VISIBLE_DEVICES={cvd!r} names {len(named)}")
    if world == 1 and count != 1:
        problems.append(f"a 1-GPU trial sees {count} GPUs")
    return info, problems


def allreduce(torch, dist, args, rank, world, dtype):
    n = args.size_mb * 1024 * 1024 // torch.tensor([], dtype=dtype).element_size()
    buf = torch.full((n,), float(rank + 1), dtype=dtype, device="cuda")
    inject(args, rank, "all_reduce")
    dist.all_reduce(buf)
    torch.cuda.synchronize()
    want = world * (world + 1) / 2  # exact in every dtype for small worlds
    bad_here = (buf != want).sum().to(torch.int64).reshape(1)
    dist.all_reduce(bad_here)  # every rank decides on every rank's count
    bad = int(bad_here.item())
    if bad:
        raise Exit(4, "wrong_output", f"all_reduce sum: {bad} of {n} elements differ from {want:g}")
    for _ in range(5):
        dist.all_reduce(buf)
    times = []
    for _ in range(args.iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dist.all_reduce(buf)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    ms = times[len(times) // 2]
    nbytes = n * buf.element_size()
    algbw = nbytes / (ms * 1e-3) / 1e9
    busbw = algbw * 2 * (world - 1) / world
    return {"allreduce_ms": {"value": ms, "unit": "ms"}, "algbw_gbps": {"value": algbw, "unit": "GB/s"},
            "busbw_gbps": {"value": busbw, "unit": "GB/s"}, "size_mb": {"value": args.size_mb, "unit": "MiB"}}


def tp_matmul(torch, dist, args, rank, world, dtype):
    m, k, n = args.m, args.k, args.n
    if k % world:
        raise Exit(3, "unsupported", f"K={k} is not divisible by {world} ranks")
    g = torch.Generator(device="cuda").manual_seed(args.seed)  # every rank draws the same X and W
    x = torch.randn(m, k, device="cuda", generator=g).to(dtype)
    w = torch.randn(k, n, device="cuda", generator=g).to(dtype)
    ks = k // world
    part = x[:, rank * ks:(rank + 1) * ks] @ w[rank * ks:(rank + 1) * ks, :]
    inject(args, rank, "all_reduce")
    dist.all_reduce(part)
    torch.cuda.synchronize()
    single = x @ w  # the same product on one GPU
    ref = x.double() @ w.double()
    norm = float(torch.linalg.vector_norm(ref))
    rel_tp = float(torch.linalg.vector_norm(part.double() - ref)) / norm
    rel_single = float(torch.linalg.vector_norm(single.double() - ref)) / norm
    rel_tp_single = float(torch.linalg.vector_norm(part.double() - single.double())) / norm
    tol = TOLERANCE[args.dtype]
    metrics = {"rel_err": {"value": rel_tp, "unit": ""}, "rel_err_single_gpu": {"value": rel_single, "unit": ""},
               "rel_diff_tp_vs_single": {"value": rel_tp_single, "unit": ""}, "tolerance": {"value": tol, "unit": ""}}
    if not bool(torch.isfinite(part).all()):
        raise Exit(4, "wrong_output", "tensor-parallel result has NaN/Inf")
    if rel_tp > tol or rel_tp_single > 2 * tol:
        raise Exit(4, "wrong_output", f"rel_err {rel_tp:.3g} (vs single GPU {rel_tp_single:.3g}) > tolerance {tol:g}")
    return metrics


def run_rank(rank, world, args, spawned):
    """One rank: returns its exit code. Under --spawn its output is prefixed here."""
    if spawned:
        sys.stdout, sys.stderr = RankPrefix(sys.stdout, rank), RankPrefix(sys.stderr, rank)
        os.environ.update({"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world)})
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    try:
        return rank_body(rank, world, local_rank, args)
    except Exit as e:
        log(f"{e.verdict}: {e.detail}")
        if rank == 0:
            write_result(e.verdict, {}, e.detail, e.signature)
            return e.code
        # Checks that every rank makes alike (sums gathered, the same product) are rank 0's to
        # report: another rank exiting non-zero first would end rank 0 before it wrote the result.
        return 0 if e.code in (3, 4) else e.code
    except BaseException:
        if spawned:  # torch.multiprocessing reprints it unprefixed too; this copy names the rank
            traceback.print_exc()
        raise


def rank_body(rank, world, local_rank, args):
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        raise Exit(5, "infra_error", f"PyTorch not importable: {e}")
    if not torch.cuda.is_available():
        raise Exit(5, "infra_error", "no GPU: torch.cuda.is_available() is False")
    if torch.cuda.device_count() <= local_rank:
        raise Exit(5, "infra_error", f"rank {rank} needs GPU {local_rank} but sees {torch.cuda.device_count()}")
    torch.cuda.set_device(local_rank)
    torch.backends.cuda.matmul.allow_tf32 = False
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    log(f"rank {rank}/{world} CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')} "
        f"device_count={torch.cuda.device_count()} device={local_rank} uuid={device_uuid(torch, local_rank)} "
        f"torch={torch.__version__} test={args.test} dtype={args.dtype} fault={args.fault}")
    if world > 1:
        # A short timeout so a peer's failure ends the survivors in seconds, not NCCL's 10 minutes;
        # device_id binds the communicator to this rank's GPU (eager init).
        dist.init_process_group("nccl", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=args.nccl_timeout_s),
                                device_id=torch.device("cuda", local_rank))
    elif args.test != "visibility":
        raise Exit(3, "unsupported", f"{args.test} needs at least 2 ranks (the trial has 1 GPU)")
    metrics, detail, problems = {}, "", []
    info = None
    if args.test == "visibility":
        info, problems = visibility(torch, args, rank, world, local_rank)
    elif args.test == "allreduce":
        metrics = allreduce(torch, dist, args, rank, world, dtype)
    else:
        metrics = tp_matmul(torch, dist, args, rank, world, dtype)
    # Every rank's view, gathered on rank 0 for the result (CPU objects over the same NCCL group).
    if info is None:
        info = {"rank": rank, "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
                "device_count": torch.cuda.device_count(), "device": local_rank, "uuid": device_uuid(torch, local_rank)}
    views = [info]
    if world > 1:
        views = [None] * world
        dist.all_gather_object(views, info)
        all_problems = [None] * world
        dist.all_gather_object(all_problems, problems)
        problems = [p for ps in all_problems for p in ps]
        known = [v["uuid"] for v in views if v["uuid"] != "unknown"]
        if args.test == "visibility" and len(set(known)) != len(known):
            problems.append("two ranks hold the same GPU")
        dist.destroy_process_group()
    print(json.dumps({"torch_distributed": {"test": args.test, "rank": rank, "world": world, "ranks": views,
                                            "metrics": metrics}}), flush=True)
    if rank != 0:
        return 0  # rank 0 has every rank's problems and reports them
    detail = "; ".join(f"rank{v['rank']}: CUDA_VISIBLE_DEVICES={v['CUDA_VISIBLE_DEVICES']} "
                       f"device_count={v['device_count']} uuid={v['uuid']}" for v in views)
    metrics["ranks"] = {"value": world, "unit": ""}
    metrics["device_count"] = {"value": info["device_count"], "unit": ""}
    if problems:
        raise Exit(4, "wrong_output", "; ".join(problems) + " | " + detail, "wrong_output:gpu_visibility")
    write_result("passed", metrics, detail)
    return 0


def run_failed(e):
    """A verdict decided before any rank started (the --spawn parent)."""
    log(f"{e.verdict}: {e.detail}")
    write_result(e.verdict, {}, e.detail, e.signature)
    return e.code


def spawned_main(rank, world, args):
    code = run_rank(rank, world, args, spawned=True)
    if code:
        sys.exit(code)


def nccl_version(torch):
    v = torch.cuda.nccl.version()
    return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def fingerprint():
    import torch
    fp = {"torch": torch.__version__, "cuda": torch.version.cuda,
          "nccl": nccl_version(torch) if torch.cuda.is_available() else None,
          "gpus": torch.cuda.device_count(),
          "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    print(json.dumps(fp))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fingerprint", action="store_true", help="print software versions as JSON and exit")
    ap.add_argument("--test", choices=["allreduce", "tp_matmul", "visibility"])
    ap.add_argument("--dtype", choices=DTYPES, default="bf16")
    ap.add_argument("--fault", choices=["none", "raise", "hang"], default="none")
    ap.add_argument("--fault-rank", type=int, default=1)
    ap.add_argument("--hang-s", type=float, default=3600)
    ap.add_argument("--nccl-timeout-s", type=float, default=30)
    ap.add_argument("--size-mb", type=int, default=256)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--hold-s", type=float, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spawn", type=int, default=0, metavar="N",
                    help="start N ranks with torch.multiprocessing.spawn instead of being one")
    args = ap.parse_args()
    if args.fingerprint:
        return fingerprint()
    if not args.test:
        ap.error("--test is required")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off (see docs/RESULTS-H200.md)
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")  # a timed-out collective ends the process
    if args.spawn:
        try:
            import torch.multiprocessing as mp
        except ImportError as e:
            return run_failed(Exit(5, "infra_error", f"PyTorch not importable: {e}"))
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", os.environ.get("GAUNTLET_PORT", "29500"))
        mp.spawn(spawned_main, args=(args.spawn, args), nprocs=args.spawn, join=True)
        return 0
    return run_rank(int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)), args, spawned=False)


if __name__ == "__main__":
    sys.exit(main())
