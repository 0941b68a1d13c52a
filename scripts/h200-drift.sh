#!/usr/bin/env bash
# Issue 32's real run: PyTorch's own answer against the runs, on the H200. `gauntlet serve` and one
# `gauntlet worker` (GPU through NVML, the kernel recorder beside it), the torch-sdpa suite (whose
# first stage is a probe asking torch.backends.cuda.can_use_*_attention(SDPAParams, debug=True))
# submitted as one sweep; then the drift answer (JSON, markdown, the CLI's table), the matrix's
# drift and evidence layers and every trial, all under $OUT.
#   on the build machine:  scripts/h200-drift.sh --stage DIR   (a self-contained bundle in DIR:
#                          binaries, the recorder, libcupti, the shared libraries, the suite, this
#                          script; carry DIR)
#   on the GPU machine:    OUT=/some/dir bash DIR/run.sh
set -uo pipefail
if [[ "${1:-}" == "--stage" ]]; then
  cd "$(dirname "$0")/.."
  B=${2:?--stage DIR}
  BIN=${BIN:-build/bin}  # where gauntlet-kernels and the recorder were built (a GPU build)
  source scripts/h200-lib.sh
  # libcupti is a fallback: PyTorch's own copy wins by soname.
  stage_binaries "$B" build/bin/gauntlet "$BIN/gauntlet-kernels" "$BIN/libgauntlet_kernrec.so" \
    /usr/local/cuda-13.0/lib64/libcupti.so.13
  mkdir -p "$B/suites"
  cp scripts/h200-lib.sh "$B/"
  cp suites/torch-sdpa.json suites/torch_sdpa.py suites/torch_sdpa_probe.py "$B/suites/"
  cp "$0" "$B/run.sh"
  du -sh "$B"
  exit 0
fi
B="$(cd "$(dirname "$0")" && pwd)"
source "$B/h200-lib.sh"
OUT=${OUT:-/tmp/gauntlet-drift}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
lib=$(ls /usr/local/cuda*/lib64/libcublas.so.13 2>/dev/null | head -1)
[[ -n "$lib" ]] && export LD_LIBRARY_PATH="$(dirname "$lib"):$LD_LIBRARY_PATH"
G="$B/bin/gauntlet"
S="$OUT/summary.txt"
say() { echo "$@" | tee -a "$S"; }
say "== env"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'; } 2>&1 | tee -a "$S"
say "== daemon + worker"
D=/tmp/gauntlet-drift-run
rm -rf "$D" && mkdir -p "$D"
# Not through a pipe: start_fleet exports GAUNTLET_SERVER and starts jobs in this shell.
start_fleet "$G" "$D" "$B/suites" "$D" h200 --pass-env LD_LIBRARY_PATH >>"$S" 2>&1 || { tail -6 "$S"; exit 1; }
if [[ -n "${SMALL:-}" ]]; then cat >"$D/sdpa.json" <<'JSON'
{"suite": "torch-sdpa", "name": "H200: what PyTorch says against what runs (five configs)",
 "parameters": {"backend": ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"], "dtype": ["bf16"], "head_dim": ["512"], "select": ["sdpa_kernel"]},
 "include": [{"backend": "CUDNN_ATTENTION", "dtype": "fp32", "head_dim": "128", "select": "sdpa_kernel"},
             {"backend": "FLASH_ATTENTION", "dtype": "fp32", "head_dim": "128", "select": "flags"}]}
JSON
else cat >"$D/sdpa.json" <<'JSON'
{"suite": "torch-sdpa", "name": "H200: what PyTorch says against what runs",
 "parameters": {"backend": ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"], "dtype": ["bf16", "fp32"],
                "head_dim": ["128", "512"], "select": ["sdpa_kernel"]},
 "include": [{"backend": "FLASH_ATTENTION", "dtype": "fp32", "head_dim": "128", "select": "flags"},
             {"backend": "FLASH_ATTENTION", "dtype": "bf16", "head_dim": "512", "select": "flags"},
             {"backend": "EFFICIENT_ATTENTION", "dtype": "bf16", "head_dim": "512", "select": "flags"},
             {"backend": "CUDNN_ATTENTION", "dtype": "fp32", "head_dim": "128", "select": "flags"},
             {"backend": "CUDNN_ATTENTION", "dtype": "bf16", "head_dim": "512", "select": "flags"}]}
JSON
fi
"$G" submit "$D/sdpa.json" 2>&1 | tail -2 | tee -a "$S"
python3 - "$GAUNTLET_SERVER" "${FOLLOW_S:-330}" <<'PY' | tee -a "$S"
import json, sys, time, urllib.request
base, limit = sys.argv[1], float(sys.argv[2])
t0, done = time.time(), False
while time.time() - t0 < limit:
    try:
        done = json.load(urllib.request.urlopen(f"{base}/api/v1/sweeps/1"))["finished"]
    except Exception as e:
        print("follow:", e)
    if done: break
    time.sleep(2)
print("sweep", "finished" if done else "NOT finished", round(time.time() - t0), "s")
PY
say "== drift"
"$G" drift --suite torch-sdpa --agrees 2>&1 | cut -c1-400 | tee -a "$S"
"$G" drift --suite torch-sdpa --format markdown >"$OUT/drift.md" 2>&1
"$G" drift --suite torch-sdpa --agrees --format json >"$OUT/drift.json" 2>&1
"$G" matrix --suite torch-sdpa --rows backend,head_dim --cols dtype --layer drift --format csv >"$OUT/matrix-drift.csv" 2>&1
"$G" matrix --suite torch-sdpa --rows backend,head_dim --cols dtype --layer evidence --format csv >"$OUT/matrix-evidence.csv" 2>&1
say "== matrix --layer drift"
"$G" matrix --suite torch-sdpa --rows backend,head_dim --cols dtype --layer drift --wide 2>&1 | cut -c1-600 | tee -a "$S"
say "== matrix --layer evidence"
"$G" matrix --suite torch-sdpa --rows backend,head_dim --cols dtype --layer evidence --wide 2>&1 | cut -c1-600 | tee -a "$S"
python3 - "$GAUNTLET_SERVER" "$OUT" <<'PY' | tee -a "$S"
import json, sys, urllib.request
base, out = sys.argv[1], sys.argv[2]
get = lambda p: json.loads(urllib.request.urlopen(base + p).read().decode())
trials = [get(f"/api/v1/trials/{t['id']}") for t in get("/api/v1/trials?sweep=1&limit=1000")["items"]]
json.dump(trials, open(f"{out}/trials.json", "w"), indent=1)
for t in trials:
    st = (t.get("result") or {}).get("stages") or []
    probe = next((s.get("probe") for s in st if s.get("probe")), {})
    disp = next((s.get("dispatch") for s in st if s.get("dispatch")), {})
    print(f"#{t['id']} {json.dumps(t['config'], sort_keys=True)} -> {t['verdict']} [{(t.get('signature') or '')[:90]}]"
          f" torch says {probe.get('supported')} ({(probe.get('reason') or '')[:160]}) dispatch={disp.get('status', '-')}")
PY
"$G" logs 1 >"$OUT/log-trial-1.txt" 2>&1
kill %2 2>/dev/null; sleep 1; kill %1 2>/dev/null; wait
tail -c 3000 "$D/worker.log" >>"$S"
