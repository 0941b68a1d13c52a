#!/usr/bin/env bash
# gemv at M=16 (and M=1) under the ring shapes and group sizes GK_GEMV_STAGES / GK_GEMV_GROUP pick,
# beside the same run's copy ceiling; the default kernel's SASS loop histogram. Tuning aid for the
# GPU machine (binaries from .gpu-carry):  OUT=/dir bench/kernels/gemv16.sh
#   CFGS  configurations, each VAR=VALUE[,VAR=VALUE...] for env; GK_DEFAULT=N (an unused variable)
#         runs the default kernel. REP repeats every configuration, interleaved (same-call A/B).
#   MS    activation rows; SHAPE_NK the N x K part of the shape (28672x8192); TIMING flush or rotate.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gk-gemv16}; mkdir -p "$OUT"
GK=${GK_BIN:-.gpu-carry}/gauntlet-kernels
cuobjdump --dump-sass "$GK" 2>/dev/null | awk '/Function : .*gemv_bulk_kernelILi14ELi2ELi3ELi2E/{p=1;print;next} p&&/Function : /{p=0} p' >"$OUT/v3_16.sass"
echo "copy GB/s: $("$GK" preflight --iters 10 | python3 -c 'import json,sys; print(json.load(sys.stdin)["perf"]["copy_gbps"])')"
for m in ${MS:-16 1}; do
  for r in $(seq "${REP:-1}"); do
    for cfg in ${CFGS:-GK_DEFAULT=1 GK_GEMV_GROUP=7 GK_GEMV_STAGES=42 GK_GEMV_STAGES=52 GK_DEFAULT=2}; do
      echo -n "M=$m $cfg: "
      timeout 60 env ${cfg//,/ } "$GK" gemm --backend gemv --shape "${m}x${SHAPE_NK:-28672x8192}" --iters 30 --timing "${TIMING:-flush}" |
        python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"], r.get("variant"), round(r["gbps"]), "GB/s", r["ms_p50"])'
    done
  done
done
