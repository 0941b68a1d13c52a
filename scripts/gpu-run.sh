#!/usr/bin/env bash
# The kernels work on a GPU machine: GPU tests, benchmarks and a sample of the torch-sdpa suite,
# results under $OUT. Uses binaries carried in $GK_BIN (default .gpu-carry, filled by
# `scripts/gpu-run.sh --stage` on the build machine) or, failing that, a local build-kernels/.
#   on the build machine:  scripts/gpu-run.sh --stage      (copies binaries into .gpu-carry/)
#   on the GPU machine:    OUT=/some/dir scripts/gpu-run.sh
# Files written: env.txt, gpu_tests.log, bench.json, bench_runs.jsonl, sdpa.jsonl, run.log.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--stage" ]]; then
  B=${BUILD_DIR:-build-kernels}
  mkdir -p .gpu-carry
  cp "$B/gauntlet-kernels" "$B/tests_gpu/kernels_gpu_test" "$B/tests/kernels_format_test" \
     "$B/tests/kernels_reference_test" "$B/tests/kernels_cli_test" .gpu-carry/
  strip --strip-debug .gpu-carry/* 2>/dev/null || true
  du -sh .gpu-carry
  exit 0
fi

OUT=${OUT:-/tmp/gauntlet-gpu-run}
mkdir -p "$OUT"
BIN=${GK_BIN:-.gpu-carry}
[[ -x "$BIN/gauntlet-kernels" ]] || BIN=build-kernels
GK="$BIN/gauntlet-kernels"
exec > >(tee "$OUT/run.log") 2>&1

# cuBLAS is dlopen'ed at run time: make the machine's copy findable (CUDA toolkit or PyTorch's wheel).
lib=$(ldconfig -p 2>/dev/null | awk '/libcublas\.so\.13 /{print $NF; exit}')
if [[ -z "$lib" ]]; then
  lib=$(ls /usr/local/cuda*/lib64/libcublas.so.13 /usr/local/cuda*/targets/x86_64-linux/lib/libcublas.so.13 \
        $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null | tr ' ' '\n' | sed 's|$|/nvidia/cu13/lib/libcublas.so.13|') \
        2>/dev/null | head -1)
fi
[[ -n "$lib" ]] && export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "cuBLAS: ${lib:-not found}"

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  nvidia-smi | head -4 | tail -2
  nvcc --version 2>/dev/null | tail -2
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' 2>&1
  uname -r
  "$GK" version
  "$GK" list
  echo "HGMMA instructions in the binary: $(cuobjdump --dump-sass "$GK" 2>/dev/null | grep -c HGMMA)"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

echo "== smoke: mma (wgmma) on a small shape, bounded =="
timeout 30 "$GK" gemm --backend mma --shape 256x512x512 --iters 2; echo "exit $?"

echo "== GPU tests =="
timeout 300 "$BIN/kernels_gpu_test" >"$OUT/gpu_tests.log" 2>&1; echo "kernels_gpu_test exit $?"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests ran|FAILED TEST" "$OUT/gpu_tests.log" | head -40
for t in kernels_format_test kernels_reference_test; do "$BIN/$t" >/dev/null 2>&1; echo "$t exit $?"; done
GAUNTLET_KERNELS_BIN="$GK" "$BIN/kernels_cli_test" 2>&1 | grep -E "OK|SKIP|FAIL" | head

echo "== benchmarks =="
: >"$OUT/bench_runs.jsonl"
BENCH_LOG="$OUT/bench_runs.jsonl" ITERS=${ITERS:-50} bench/kernels/run.sh "$GK" >"$OUT/bench.json"
cat "$OUT/bench_runs.jsonl" | cut -c1-400

if [[ "${SKIP_SDPA:-0}" != 1 ]]; then
echo "== torch-sdpa sample =="
: >"$OUT/sdpa.jsonl"
for be in FLASH_ATTENTION EFFICIENT_ATTENTION CUDNN_ATTENTION MATH; do
  for cfg in "bf16 64" "bf16 512" "fp16 128"; do
    set -- $cfg
    GAUNTLET_RESULT_FILE="$OUT/sdpa_result.json" timeout 120 python3 suites/torch_sdpa.py --backend "$be" --dtype "$1" \
      --head-dim "$2" >>"$OUT/sdpa.jsonl" 2>/dev/null
    echo "$be $1 $2 exit $? result: $(cat "$OUT/sdpa_result.json" 2>/dev/null | cut -c1-200)"
  done
done
rm -f "$OUT/sdpa_result.json"
fi
python3 - "$OUT/bench.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
print(json.dumps(b["targets"], indent=1))
PY
