#!/usr/bin/env python3
"""The kernel recorder's overhead (issue 30): the same programs with and without
libgauntlet_kernrec.so (CUDA_INJECTION64_PATH + GAUNTLET_KERNREC_DIR), runs alternated so drift
hits both sides alike. Prints one JSON document.

    bench/kernrec/overhead.py --lib build/bin/libgauntlet_kernrec.so --kernels build/bin/gauntlet-kernels
                              [--sdpa suites/torch_sdpa.py] [--repeats 5]

Measured:
  start_s        wall time of a process that initialises CUDA and launches one kernel (python3 +
                 torch, and gauntlet-kernels' smallest gemm), median of --repeats: the recorder's
                 CUPTI initialisation and its exit flush land here (target: <= 0.5 s added);
  kernel trials  the kernels' own time as each trial measures it with CUDA events (gemm's ms_p50,
                 torch_sdpa's ms) and the process's wall time, median of --repeats (target: <= 3%).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, lib, record):
    env = dict(os.environ)
    d = None
    if record:
        d = tempfile.mkdtemp(prefix="kernrec-bench-")
        env["CUDA_INJECTION64_PATH"] = lib
        env["GAUNTLET_KERNREC_DIR"] = d
    else:
        env.pop("CUDA_INJECTION64_PATH", None)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t0
    kernels = None
    if d:
        files = [f for f in os.listdir(d) if f.endswith(".txt")]
        kernels = sum(1 for f in files for line in open(os.path.join(d, f)) if line.startswith("kernel "))
        shutil.rmtree(d, ignore_errors=True)
    last = None
    for line in reversed(p.stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                last = json.loads(line)
                break
            except ValueError:
                pass
    return {"rc": p.returncode, "wall_s": wall, "out": last, "kernels_recorded": kernels,
            "stderr": p.stderr[-300:] if p.returncode else ""}


def pair(name, cmd, lib, repeats, metric=None):
    """Alternates plain and recorded runs; medians of wall time and of `metric` (a key of the
    program's last JSON line)."""
    rows = {"plain": [], "recorded": []}
    for _ in range(repeats):
        for side in ("plain", "recorded"):
            rows[side].append(run(cmd, lib, side == "recorded"))
    res = {"name": name, "cmd": " ".join(cmd), "repeats": repeats}
    for side, rs in rows.items():
        ok = [r for r in rs if r["rc"] == 0]
        res[side] = {"ok": len(ok), "wall_s_median": statistics.median(r["wall_s"] for r in ok) if ok else None,
                     "wall_s": [round(r["wall_s"], 4) for r in rs]}
        if metric and ok and all(r["out"] and metric in r["out"] for r in ok):
            vals = [r["out"][metric] for r in ok]
            res[side][metric + "_median"] = statistics.median(vals)
            res[side][metric] = vals
        if side == "recorded":
            res[side]["kernels_recorded"] = [r["kernels_recorded"] for r in rs]
        fails = [r["stderr"] for r in rs if r["rc"] != 0]
        if fails:
            res[side]["failures"] = fails[:2]
    p, r = res["plain"], res["recorded"]
    if p["wall_s_median"] and r["wall_s_median"]:
        res["wall_added_s"] = r["wall_s_median"] - p["wall_s_median"]
        res["wall_overhead_pct"] = 100 * (r["wall_s_median"] / p["wall_s_median"] - 1)
    if metric and metric + "_median" in p and metric + "_median" in r:
        res[metric + "_overhead_pct"] = 100 * (r[metric + "_median"] / p[metric + "_median"] - 1)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--kernels", required=True, help="gauntlet-kernels")
    ap.add_argument("--sdpa", help="suites/torch_sdpa.py")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", help="also rewrite this file after each measurement (a run cut short keeps what it measured)")
    a = ap.parse_args()
    py_start = [sys.executable, "-c", "import torch; x = torch.ones(1, device='cuda'); (x + 1).sum().item()"]
    out = {"bench": "kernrec-overhead", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "lib": os.path.abspath(a.lib), "results": []}

    class Results(list):
        def append(self, r):
            super().append(r)
            if a.out:
                with open(a.out + ".tmp", "w") as f:
                    json.dump(out, f, indent=1)
                os.replace(a.out + ".tmp", a.out)
    out["results"] = Results()
    out["results"].append(pair("start: python3 + torch, one kernel", py_start, a.lib, a.repeats))
    out["results"].append(pair("start: gauntlet-kernels gemm 16x64x64", [a.kernels, "gemm", "--backend", "reference",
                                "--shape", "16x64x64", "--iters", "1", "--warmup", "0"], a.lib, a.repeats))
    out["results"].append(pair("trial: gemm mma 8192^3 (20 timed launches)", [a.kernels, "gemm", "--backend", "mma",
                                "--shape", "8192x8192x8192", "--iters", "20"], a.lib, a.repeats, "ms_p50"))
    out["results"].append(pair("trial: gemm gemv 1x28672x8192 (decode)", [a.kernels, "gemm", "--backend", "gemv",
                                "--shape", "1x28672x8192", "--iters", "50"], a.lib, a.repeats, "ms_p50"))
    if a.sdpa:
        out["results"].append(pair("trial: torch_sdpa FLASH bf16 d128 (20 timed calls)", [sys.executable, a.sdpa,
                                    "--backend", "FLASH_ATTENTION", "--dtype", "bf16", "--head-dim", "128"],
                                   a.lib, a.repeats, "ms"))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
