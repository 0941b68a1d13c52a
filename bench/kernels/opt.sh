#!/usr/bin/env bash
# One device call for the mma/gemv tuning work: SASS checks, GPU tests, same-run ceilings, and the
# kernel variants side by side. Uses binaries staged in .gpu-carry (scripts/gpu-run.sh --stage).
#   OUT=/dir [QUICK=1] bench/kernels/opt.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gk-opt}; mkdir -p "$OUT"
BIN=${GK_BIN:-.gpu-carry}; GK="$BIN/gauntlet-kernels"
exec > >(tee "$OUT/opt.log") 2>&1
lib=$(ls /usr/local/cuda*/lib64/libcublas.so.13 /usr/local/cuda*/targets/x86_64-linux/lib/libcublas.so.13 \
      $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null | tr ' ' '\n' | sed 's|$|/nvidia/cu13/lib/libcublas.so.13|') 2>/dev/null | head -1)
[[ -n "$lib" ]] && export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
"$GK" version | cut -c1-400
cuobjdump --dump-sass "$GK" >"$OUT/sass.txt" 2>/dev/null
python3 - "$OUT/sass.txt" <<'PY'
import re, sys
fn = None; stats = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Function : (\S+)", line)
    if m: fn = m.group(1); stats[fn] = {}; continue
    if fn is None: continue
    for op in ("HGMMA", "HMMA", "HMUL2.BF16_V2", "PRMT", "LDS.128", "LDG.E.128", "LDL", "STL", "LDGSTS", "STS.128"):
        if re.search(r"\b" + re.escape(op) + r"\b", line): stats[fn][op] = stats[fn].get(op, 0) + 1
for fn, s in stats.items():
    if "wgmma" in fn or "gemv" in fn: print(fn[-70:], s)
PY
# The gemv v4 kernel's SASS in full (operand forms of HMUL2, the loop's instruction count).
awk '/Function : .*gemv_wgmma_kernelILi16ELi1ELi6ELi2/{p=1} p&&/Function : /&&!/gemv_wgmma_kernelILi16ELi1ELi6ELi2/{p=0} p' "$OUT/sass.txt" >"$OUT/sass_gemv4.txt"
echo "gemv v4 <16,1,6> SASS lines: $(wc -l <"$OUT/sass_gemv4.txt"); HMUL2 with half selects: $(grep -c 'HMUL2.*\.H[01]_H[01]' "$OUT/sass_gemv4.txt")"
# Bounded smoke runs first: a hang in a new kernel must not eat the whole call.
for sm in "mma 256x512x512" "mma 129x300x208" "gemv 1x17000x528" "gemv 16x16900x256"; do
  set -- $sm; timeout 20 "$GK" gemm --backend $1 --shape $2 --iters 2 | cut -c1-300; echo "smoke $sm exit $?"
done
[[ "${QUICK:-0}" == 1 ]] || { timeout 200 "$BIN/kernels_gpu_test" >"$OUT/gpu_tests.log" 2>&1; echo "kernels_gpu_test exit $?";
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |FAILED TEST" "$OUT/gpu_tests.log" | head -20; }
IT=${ITERS:-30}
: >"$OUT/runs.jsonl"
r() { local tag=$1; shift; local o; o=$(timeout 120 env "$@" 2>/dev/null); echo "{\"tag\":\"$tag\",\"r\":${o:-null}}" >>"$OUT/runs.jsonl"; }
r pre "$GK" preflight --iters 20
if [[ "${GEMV_ONLY:-0}" != 1 ]]; then
for impl in v3 v3n256 v2; do r "mma-$impl" GK_WGMMA_IMPL=$impl "$GK" gemm --backend mma --shape 8192x8192x8192 --iters $IT; done
r dq8192 "$GK" gemm --backend dequant_cublas --shape 8192x8192x8192 --iters $IT
r mma2048 "$GK" gemm --backend mma --shape 2048x8192x8192 --iters $IT
r mma-v3b GK_WGMMA_IMPL=v3 "$GK" gemm --backend mma --shape 8192x8192x8192 --iters $IT
fi
for m in ${GEMV_MS:-1 16}; do
  r "gemv$m-v3" "$GK" gemm --backend gemv --shape ${m}x28672x8192 --iters $IT
  r "gemv$m-v4" GK_GEMV_IMPL=v4 "$GK" gemm --backend gemv --shape ${m}x28672x8192 --iters $IT
  for kv in ${GEMV_KVS:-GK_GEMV_MB=2}; do
    r "gemv$m-v4-${kv#GK_GEMV_}" GK_GEMV_IMPL=v4 $kv "$GK" gemm --backend gemv --shape ${m}x28672x8192 --iters $IT
  done
  r "gemv$m-v2" GK_GEMV_IMPL=v2 "$GK" gemm --backend gemv --shape ${m}x28672x8192 --iters $IT
  r "gemv$m-v3b" "$GK" gemm --backend gemv --shape ${m}x28672x8192 --iters $IT
  r "gemv$m-swz" "$GK" gemm --backend gemv --shape ${m}x28672x8192 --scale-layout swizzled --iters $IT
  r "gemv$m-dq" "$GK" gemm --backend dequant_cublas --shape ${m}x28672x8192 --iters $IT
done
r pre2 "$GK" preflight --iters 20
[[ "${RUNSH:-0}" == 1 ]] && { BENCH_LOG="$OUT/bench_runs.jsonl" ITERS=30 bench/kernels/run.sh "$GK" >"$OUT/bench.json"; python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['targets']))" "$OUT/bench.json"; }
python3 - "$OUT/runs.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ce = {}
for x in rows:
    r = x["r"] or {}
    if x["tag"].startswith("pre"):
        p = r.get("perf", {}); print(x["tag"], "copy", p.get("copy_gbps"), "cublas", p.get("bf16_tflops")); ce.setdefault("copy", p.get("copy_gbps")); ce.setdefault("cub", p.get("bf16_tflops"))
for x in rows:
    r = x["r"] or {}
    if x["tag"].startswith("pre"): continue
    t, g = r.get("tflops"), r.get("gbps")
    rel = (t / ce["cub"] if t and ce.get("cub") else None) if r.get("m", 0) > 16 else (g / ce["copy"] if g and ce.get("copy") else None)
    print(f'{x["tag"]:14} {r.get("verdict")} rel_err={r.get("rel_err")} ms={r.get("ms_p50")} tflops={t} gbps={g} frac={rel and round(rel,3)} {str(r.get("detail",""))[:120]}')
PY
if [[ "${NCU:-0}" == 1 ]] && command -v ncu >/dev/null; then
  timeout 90 ncu --clock-control none --kernel-name regex:mma_wgmma_v2 --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
    "$GK" gemm --backend mma --shape 4096x4096x4096 --iters 2 --warmup 1 >"$OUT/ncu_mma.txt" 2>&1
  echo "ncu exit $?"; grep -E "Throughput|Stall|Busy|Pipe|Issue|Shared|Bank" "$OUT/ncu_mma.txt" | head -40
fi
