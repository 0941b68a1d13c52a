#!/usr/bin/env bash
# Short same-run comparison on the GPU machine (tuning; binaries from .gpu-carry):
#   bench/kernels/quick.sh [mma|gemv|all]
set -uo pipefail
cd "$(dirname "$0")/../.."
GK=${GK_BIN:-.gpu-carry}/gauntlet-kernels
what=${1:-all}
j() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"], round(r["tflops"],1), "TFLOP/s", round(r["gbps"]), "GB/s", r["ms_p50"], r.get("variant",""))'; }
echo "ceilings (copy GB/s, cuBLAS TFLOP/s): $("$GK" preflight --iters 10 | python3 -c 'import json,sys; p=json.load(sys.stdin)["perf"]; print(p["copy_gbps"], p["bf16_tflops"])')"
for flush in read write; do
  export GK_FLUSH=$flush
  if [[ $what != gemv ]]; then
    for impl in v3 v2; do echo -n "[$flush] mma $impl 8192: "; GK_WGMMA_IMPL=$impl timeout 60 "$GK" gemm --backend mma --shape 8192x8192x8192 --iters 20 | j; done
    echo -n "[$flush] dequant_cublas 8192: "; timeout 60 "$GK" gemm --backend dequant_cublas --shape 8192x8192x8192 --iters 20 | j
  fi
  if [[ $what != mma ]]; then
    for m in 1 16; do
      echo -n "[$flush] gemv default M=$m: "; timeout 60 "$GK" gemm --backend gemv --shape ${m}x28672x8192 --iters 30 | j
      echo -n "[$flush] gemv v2 M=$m: "; GK_GEMV_IMPL=v2 timeout 60 "$GK" gemm --backend gemv --shape ${m}x28672x8192 --iters 30 | j
    done
  fi
done
