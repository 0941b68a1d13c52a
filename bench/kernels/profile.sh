#!/usr/bin/env bash
# Nsight Compute on the GPU machine for the kernel tuning work: speed of light, issue activity,
# tensor-pipe use and the stall breakdown of the default mma/gemv kernels beside their predecessors.
#   OUT=/dir bench/kernels/profile.sh        (binaries from .gpu-carry, like opt.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gk-prof}; mkdir -p "$OUT"
GK=${GK_BIN:-.gpu-carry}/gauntlet-kernels
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[[ -n "$NCU" ]] || { echo "no ncu on this machine"; exit 0; }
stalls=""
for s in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle membar sleeping \
         dispatch_stall no_instruction not_selected selected branch_resolving misc drain tex_throttle; do
  stalls+="smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio,"
done
metrics="${stalls}smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum.per_second,lts__t_bytes.sum.per_second,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__warps_active.avg.per_cycle_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__issue_active.max.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
p() {  # tag kernel-regex env... -- gemm args
  local tag=$1 kre=$2; shift 2
  timeout 150 env "$@" "$NCU" --clock-control none --kernel-name "regex:$kre" --launch-skip 2 --launch-count 1 --metrics "$metrics" \
    --csv --page raw "$GK" gemm --iters 3 --warmup 1 --check-budget 1000000 ${GEMM_ARGS} >"$OUT/ncu-$tag.csv" 2>"$OUT/ncu-$tag.err"
  python3 - "$OUT/ncu-$tag.csv" "$tag" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next((i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r), None)
if hdr is None: print(sys.argv[2], "no data"); sys.exit()
h, v = rows[hdr], rows[hdr + 2] if len(rows) > hdr + 2 else rows[-1]
d = dict(zip(h, v))
st = sorted(((float(d[k] or 0), k.split("stalled_")[1].split("_per")[0]) for k in h if "issue_stalled" in k), reverse=True)[:6]
short = {k.split("__")[1][:40]: d[k] for k in h if k.startswith(("smsp__issue", "sm__pipe", "dram__", "lts__", "l1tex__", "smsp__warps", "sm__throughput", "gpu__time"))}
print(sys.argv[2], short, "stalls:", [(n, round(x, 2)) for x, n in st])
PY
}
# Tags and kernels to profile: PROFILE="tag:kernel-regex:ENV=V:gemm args;..." or the defaults below.
if [[ -n "${PROFILE:-}" ]]; then
  IFS=';' read -ra jobs <<<"$PROFILE"
  for job in "${jobs[@]}"; do
    IFS=':' read -r tag kre envs args <<<"$job"
    GEMM_ARGS="$args" p "$tag" "$kre" $envs
  done
  exit 0
fi
GEMM_ARGS="--backend mma --shape 8192x8192x8192" p mma-v3 rs_kernel GK_WGMMA_IMPL=v3
GEMM_ARGS="--backend mma --shape 8192x8192x8192" p mma-v2 v2_kernel GK_WGMMA_IMPL=v2
GEMM_ARGS="--backend gemv --shape 1x28672x8192" p gemv1-v3 gemv_bulk GK_GEMV_IMPL=v3
GEMM_ARGS="--backend gemv --shape 1x28672x8192" p gemv1-v2 gemv_v2 GK_GEMV_IMPL=v2
GEMM_ARGS="--backend gemv --shape 16x28672x8192" p gemv16-v3 gemv_bulk GK_GEMV_IMPL=v3
GEMM_ARGS="--backend gemv --shape 16x28672x8192" p gemv16-v2 gemv_v2 GK_GEMV_IMPL=v2
