#!/usr/bin/env bash
# Kernel benchmarks on the GPU this runs on; prints one JSON document (and keeps each run's JSON
# line in $BENCH_LOG if set). Ceilings come from `gauntlet-kernels preflight` in the same run:
# device-to-device copy bandwidth and cuBLAS bf16 TFLOP/s.
#   bench/kernels/run.sh [path/to/gauntlet-kernels]
# Targets (docs/KERNELS.md): mma at 8192^3 >= 70% of cuBLAS bf16; gemv at M=1 and M=16,
# N=28672, K=8192 >= 75% of copy bandwidth (bytes it must move); both also vs dequant_cublas.
set -uo pipefail
GK=${1:-gauntlet-kernels}
ITERS=${ITERS:-50}
LOG=${BENCH_LOG:-/dev/null}
TMO=${BENCH_TIMEOUT:-180}
lines=()

run() {  # every run is bounded: a hung kernel must not eat the whole lease
  local out
  out=$(timeout "$TMO" "$GK" "$@" 2>/dev/null)
  local rc=$?
  [[ -z "$out" ]] && out="{\"argv\": \"$*\", \"verdict\": \"crashed\", \"exit\": $rc}"
  echo "$out" >>"$LOG"
  lines+=("$out")
}

run preflight --iters 20
for shape in 8192x8192x8192 2048x8192x8192; do
  run gemm --backend mma --shape "$shape" --iters "$ITERS"
  run gemm --backend mma --mma-path sync --shape "$shape" --iters "$ITERS"
  run gemm --backend dequant_cublas --shape "$shape" --iters "$ITERS"
done
for shape in 1x28672x8192 16x28672x8192; do
  run gemm --backend gemv --shape "$shape" --iters "$ITERS"
  run gemm --backend gemv --shape "$shape" --scale-layout swizzled --iters "$ITERS"
  run gemm --backend gemv --shape "$shape" --timing rotate --iters "$ITERS"
  run gemm --backend dequant_cublas --shape "$shape" --iters "$ITERS"
  run gemm --backend mma --shape "$shape" --iters "$ITERS"
done
# The previous kernels in the same run (the targets above read the defaults, which come first).
GK_WGMMA_IMPL=v2 run gemm --backend mma --shape 8192x8192x8192 --iters "$ITERS"
for shape in 1x28672x8192 16x28672x8192; do GK_GEMV_IMPL=v2 run gemm --backend gemv --shape "$shape" --iters "$ITERS"; done
run gemm --backend sm120_native --shape 16x4096x4096 --iters 5

printf '%s\n' "${lines[@]}" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
pre = rows[0] if rows and "perf" in rows[0] else {}
perf = pre.get("perf", {})
copy, cublas = perf.get("copy_gbps"), perf.get("bf16_tflops")
def find(backend, shape, **kw):
    m, n, k = map(int, shape.split("x"))
    for r in rows[1:]:
        if r.get("backend") == backend and (r.get("m"), r.get("n"), r.get("k")) == (m, n, k) and \
           all(r.get(a) == b for a, b in kw.items()):
            return r
    return {}
def ratio(a, b):
    return round(a / b, 3) if a and b else None
mma = find("mma", "8192x8192x8192", variant="wgmma", scale_layout="plain")
dq8 = find("dequant_cublas", "8192x8192x8192")
t = {"mma_8192_tflops": mma.get("tflops"), "cublas_bf16_tflops": cublas,
     "mma_vs_cublas_bf16": ratio(mma.get("tflops"), cublas), "mma_vs_dequant_cublas": ratio(mma.get("tflops"), dq8.get("tflops")),
     "mma_target": 0.70, "copy_gbps": copy}
for m in (1, 16):
    g = find("gemv", f"{m}x28672x8192", scale_layout="plain", timing="flush")
    gr = find("gemv", f"{m}x28672x8192", scale_layout="plain", timing="rotate")
    d = find("dequant_cublas", f"{m}x28672x8192")
    t[f"gemv_m{m}_gbps"] = g.get("gbps")
    t[f"gemv_m{m}_vs_copy"] = ratio(g.get("gbps"), copy)
    t[f"gemv_m{m}_rotated_gbps"] = gr.get("gbps")
    t[f"gemv_m{m}_rotated_vs_copy"] = ratio(gr.get("gbps"), copy)
    t[f"gemv_m{m}_vs_dequant_cublas_speedup"] = ratio(d.get("ms_p50"), g.get("ms_p50"))
t["gemv_target"] = 0.75
keep = ("backend", "variant", "m", "n", "k", "scale_layout", "timing", "rotate_sets", "graph_launches", "verdict", "rel_err", "ms_p50", "tflops", "gbps", "detail")
print(json.dumps({"gpu": pre.get("gpu"), "arch": pre.get("arch"), "cuda_driver": pre.get("cuda_driver"),
                  "driver": pre.get("health", {}).get("driver"), "cublas": perf.get("cublas"),
                  "ceilings": {"copy_gbps": copy, "cublas_bf16_tflops": cublas}, "targets": t,
                  "runs": [{k: r.get(k) for k in keep if k in r} for r in rows[1:]]}, indent=1))
'
