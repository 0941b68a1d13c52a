#!/usr/bin/env bash
# Issue 5's real run: `gauntlet serve` and a `gauntlet worker` that discovers the GPU through NVML,
# both built-in GPU suites submitted and run by the daemon, results (matrix CSVs, trials, nodes) to $OUT.
#   on the build machine:  scripts/h200-run.sh --stage     (fills .devbuild/ with binaries and the
#                                                            shared libraries the GPU machine lacks)
#   on the GPU machine:    OUT=/some/dir scripts/h200-run.sh
set -uo pipefail
cd "$(dirname "$0")/.."
C=.devbuild
source scripts/h200-lib.sh
if [[ "${1:-}" == "--stage" ]]; then
  stage_binaries "$C" build/bin/gauntlet build/bin/gauntlet-kernels
  du -sh "$C"
  exit 0
fi
OUT=${OUT:-/tmp/gauntlet-h200}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# cuBLAS is dlopen'ed by gauntlet-kernels: the toolkit's copy or PyTorch's wheel.
lib=$(ldconfig -p 2>/dev/null | awk '/libcublas\.so\.13 /{print $NF; exit}')
[[ -z "$lib" ]] && lib=$(ls /usr/local/cuda*/lib64/libcublas.so.13 2>/dev/null | head -1)
[[ -n "$lib" ]] && export LD_LIBRARY_PATH="$(dirname "$lib"):$LD_LIBRARY_PATH"
G="$PWD/$C/bin/gauntlet"
D=/tmp/gauntlet-h200-run
rm -rf "$D" && mkdir -p "$D"
start_fleet "$G" "$D" "$PWD/suites" "$OUT" h200 --pass-env LD_LIBRARY_PATH || exit 1
"$G" nodes --format json >"$OUT/nodes-start.json" 2>&1
cat >"$D/nvfp4.json" <<'JSON'
{"suite": "nvfp4-gemm", "name": "H200: NVFP4 GEMM backends, decode and prefill",
 "parameters": {"scale_layout": ["plain"], "fault": ["none"]},
 "include": [{"backend": "mma", "shape": "2048x8192x8192", "scale_layout": "swizzled", "fault": "none"},
             {"backend": "gemv", "shape": "16x28672x8192", "scale_layout": "swizzled", "fault": "none"},
             {"backend": "mma", "shape": "2048x8192x8192", "scale_layout": "plain", "fault": "scale-layout"},
             {"backend": "dequant_cublas", "shape": "2048x8192x8192", "scale_layout": "plain", "fault": "scale-layout"},
             {"backend": "gemv", "shape": "16x28672x8192", "scale_layout": "plain", "fault": "scale-layout"}]}
JSON
cat >"$D/sdpa.json" <<'JSON'
{"suite": "torch-sdpa", "name": "H200: PyTorch SDPA backends", "parameters": {"dtype": ["bf16", "fp16"]}}
JSON
"$G" submit "$D/nvfp4.json" >"$OUT/submit.log" 2>&1
"$G" submit "$D/sdpa.json" >>"$OUT/submit.log" 2>&1
# Follow until both sweeps are done (bounded).
python3 - "$GAUNTLET_SERVER" <<'PY'
import json, sys, time, urllib.request
base = sys.argv[1]
t0 = time.time()
while time.time() - t0 < 460:
    done = all(json.load(urllib.request.urlopen(f"{base}/api/v1/sweeps/{i}"))["finished"] for i in (1, 2))
    if done: break
    time.sleep(2)
print("finished" if done else "NOT finished", round(time.time() - t0), "s")
PY
"$G" status --format json >"$OUT/sweeps.json"
"$G" nodes --format json >"$OUT/nodes.json"
python3 - "$GAUNTLET_SERVER" "$OUT" <<'PY'
import json, sys, urllib.request
base, out = sys.argv[1], sys.argv[2]
get = lambda p: urllib.request.urlopen(base + p).read().decode()
open(f"{out}/matrix-nvfp4-gemm.csv", "w").write(get("/api/v1/matrix?suite=nvfp4-gemm&rows=backend,shape&cols=hardware&format=csv"))
open(f"{out}/matrix-nvfp4-faults.csv", "w").write(get("/api/v1/matrix?suite=nvfp4-gemm&rows=backend,fault&cols=shape&format=csv"))
open(f"{out}/matrix-torch-sdpa.csv", "w").write(get("/api/v1/matrix?suite=torch-sdpa&rows=backend,head_dim&cols=dtype&format=csv"))
trials = []
for sweep in (1, 2):
    for t in json.loads(get(f"/api/v1/trials?sweep={sweep}&limit=1000"))["items"]:
        trials.append(json.loads(get(f"/api/v1/trials/{t['id']}")))
json.dump(trials, open(f"{out}/trials.json", "w"), indent=1)
for t in trials:
    m = t.get("result", {}).get("metrics", {})
    print(t["suite"], json.dumps(t["config"], sort_keys=True), t["verdict"], t["signature"] or "",
          {k: v.get("value") for k, v in m.items() if k in ("tflops", "gbps", "ms_p50", "rel_err", "ms")})
PY
kill %2 2>/dev/null; sleep 1; kill %1 2>/dev/null; wait
tail -5 "$OUT/worker.log"
