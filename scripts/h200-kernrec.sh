#!/usr/bin/env bash
# Issue 30's real run: the kernel recorder on the H200. One script, everything under $OUT:
#   1. the recorder's GPU test (kernrec_gpu_test: a gauntlet-kernels process recorded, one that
#      never uses CUDA unaffected);
#   2. `gauntlet serve` + one `gauntlet worker` (GPU found through NVML, the recorder found beside
#      it and reported at registration), the torch-sdpa and hf-attention suites submitted as sweeps:
#      passed (verified), fallback and unsupported side by side, each trial with its kernels;
#   3. bench/kernrec/overhead.py: the recorder's cost on kernel benchmark trials and process starts.
#
#   on the build machine:  scripts/h200-kernrec.sh --stage DIR   (a self-contained bundle in DIR:
#                          binaries, the recorder, libcupti, the needed shared libraries, the two
#                          suites, the bench and this script; carry DIR)
#   on the GPU machine:    OUT=/some/dir bash DIR/run.sh
set -uo pipefail
if [[ "${1:-}" == "--stage" ]]; then
  cd "$(dirname "$0")/.."
  B=${2:?--stage DIR}
  source scripts/h200-lib.sh
  # libcupti is a fallback: PyTorch's own copy wins by soname.
  stage_binaries "$B" build/bin/gauntlet build/bin/gauntlet-kernels build/bin/libgauntlet_kernrec.so \
    build/bin/kernrec_gpu_test /usr/local/cuda-13.0/lib64/libcupti.so.13
  mkdir -p "$B/suites" "$B/bench"
  cp suites/torch-sdpa.json suites/torch_sdpa.py suites/hf-attention.json suites/hf_attention.py "$B/suites/"
  cp bench/kernrec/overhead.py "$B/bench/"
  cp "$0" "$B/run.sh"
  cp scripts/h200-lib.sh "$B/"
  du -sh "$B"
  exit 0
fi
B="$(cd "$(dirname "$0")" && pwd)"
source "$B/h200-lib.sh"
OUT=${OUT:-/tmp/gauntlet-kernrec}
R="$OUT/r"
mkdir -p "$R"
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
lib=$(ls /usr/local/cuda*/lib64/libcublas.so.13 2>/dev/null | head -1)
[[ -n "$lib" ]] && export LD_LIBRARY_PATH="$(dirname "$lib"):$LD_LIBRARY_PATH"
G="$B/bin/gauntlet"
S="$OUT/summary.txt"
say() { echo "$@" | tee -a "$S"; }
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "transformers", transformers.__version__)'
  python3 -c 'import torch, os; d=os.path.dirname(torch.__file__); print("torch dir", d)'
  ls /usr/local/cuda*/lib64/libcupti* 2>/dev/null; python3 -c 'import nvidia, os; print(nvidia.__path__)' 2>/dev/null
  find / -name 'libcupti.so*' -not -path '*/proc/*' 2>/dev/null | head
} >"$R/env.txt" 2>&1
say "== env"; cat "$R/env.txt" | head -8 | tee -a "$S"

say "== 1. recorder GPU test"
GAUNTLET_KERNREC_LIB="$B/bin/libgauntlet_kernrec.so" GAUNTLET_KERNELS_BIN="$B/bin/gauntlet-kernels" \
  timeout 90 "$B/bin/kernrec_gpu_test" >"$R/gpu_test.log" 2>&1
say "kernrec_gpu_test rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]" "$R/gpu_test.log" | tee -a "$S"
# One recorded process by hand, its record kept: what the file looks like on this machine.
mkdir -p "$R/by-hand"
CUDA_INJECTION64_PATH="$B/bin/libgauntlet_kernrec.so" GAUNTLET_KERNREC_DIR="$R/by-hand" timeout 60 \
  python3 "$B/suites/torch_sdpa.py" --backend FLASH_ATTENTION --dtype fp32 --head-dim 128 --select flags >"$R/by-hand.out" 2>&1
say "by hand (flags, FLASH, fp32) rc=$?"; head -c 3000 "$R"/by-hand/kernrec.*.txt | cut -c1-220 | tee -a "$S"

say "== 2. daemon + worker"
D=/tmp/gauntlet-kernrec-run
rm -rf "$D" && mkdir -p "$D"
start_fleet "$G" "$D" "$B/suites" "$R" h200 --pass-env LD_LIBRARY_PATH || exit 1
sleep 2
"$G" nodes --format json >"$R/nodes.json" 2>&1
grep -h "kernel recorder" "$R/worker.log" | tee -a "$S"
cat >"$D/sdpa.json" <<'JSON'
{"suite": "torch-sdpa", "name": "H200: SDPA backends asked by sdpa_kernel and by flags",
 "parameters": {"backend": ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"], "dtype": ["bf16", "fp32"],
                "head_dim": ["128"], "select": ["sdpa_kernel", "flags"]},
 "include": [{"backend": "FLASH_ATTENTION", "dtype": "bf16", "head_dim": "512", "select": "sdpa_kernel"},
             {"backend": "FLASH_ATTENTION", "dtype": "bf16", "head_dim": "512", "select": "flags"},
             {"backend": "MATH", "dtype": "bf16", "head_dim": "128", "select": "sdpa_kernel"}]}
JSON
cat >"$D/hf.json" <<'JSON'
{"suite": "hf-attention", "name": "H200: transformers attention",
 "parameters": {"attn": ["eager", "sdpa"], "dtype": ["bf16"], "output_attentions": ["off", "on"]}}
JSON
"$G" submit "$D/sdpa.json" >"$R/submit.log" 2>&1
"$G" submit "$D/hf.json" >>"$R/submit.log" 2>&1
cat "$R/submit.log" | tail -4
python3 - "$GAUNTLET_SERVER" "${FOLLOW_S:-240}" <<'PY'
import json, sys, time, urllib.request
base, limit = sys.argv[1], float(sys.argv[2])
t0 = time.time()
done = False
while time.time() - t0 < limit:
    try:
        done = all(json.load(urllib.request.urlopen(f"{base}/api/v1/sweeps/{i}"))["finished"] for i in (1, 2))
    except Exception as e:
        print("follow:", e)
    if done: break
    time.sleep(2)
print("sweeps", "finished" if done else "NOT finished", round(time.time() - t0), "s")
PY
python3 - "$GAUNTLET_SERVER" "$R" <<'PY' | tee -a "$S"
import json, sys, urllib.request
base, out = sys.argv[1], sys.argv[2]
get = lambda p: urllib.request.urlopen(base + p).read().decode()
for suite, q in (("torch-sdpa", "rows=backend,select&cols=dtype"), ("hf-attention", "rows=attn,output_attentions&cols=dtype")):
    try:
        open(f"{out}/matrix-{suite}.csv", "w").write(get(f"/api/v1/matrix?suite={suite}&{q}&format=csv"))
    except Exception as e:
        print("matrix", suite, e)
trials = []
for sweep in (1, 2):
    for t in json.loads(get(f"/api/v1/trials?sweep={sweep}&limit=1000"))["items"]:
        trials.append(json.loads(get(f"/api/v1/trials/{t['id']}")))
json.dump(trials, open(f"{out}/trials.json", "w"), indent=1)
for t in trials:
    k = t.get("kernels") or {}
    st = (t.get("result") or {}).get("stages") or [{}]
    d = st[0].get("dispatch", {}) if st else {}
    top = "; ".join(f"{x['family']} x{x['count']} {x['total_ns']/1e6:.2f}ms" for x in (k.get("top") or [])[:3])
    print(f"#{t['id']} {t['suite']} {json.dumps(t['config'], sort_keys=True)} -> {t['verdict']} [{t.get('signature') or ''}]"
          f" dispatch={d.get('status', '-')} complete={k.get('complete')} dropped={k.get('dropped')} procs={k.get('processes')}"
          f" carried_by={k.get('carrying_family')} | {top}")
PY
for id in 1 7; do "$G" logs $id >"$R/log-trial-$id.txt" 2>&1; done
kill %2 2>/dev/null; sleep 1; kill %1 2>/dev/null; wait
tail -3 "$R/worker.log"

say "== 3. overhead bench"
timeout "${BENCH_S:-170}" python3 "$B/bench/overhead.py" --lib "$B/bin/libgauntlet_kernrec.so" --kernels "$B/bin/gauntlet-kernels" \
  --sdpa "$B/suites/torch_sdpa.py" --repeats "${REPEATS:-3}" --out "$R/bench.json" >/dev/null 2>"$R/bench.err"
say "bench rc=$?"
python3 - "$R/bench.json" <<'PY' | tee -a "$S"
import json, sys
try:
    b = json.load(open(sys.argv[1]))
except Exception as e:
    print("no bench:", e); sys.exit()
for r in b["results"]:
    extra = {k: round(v, 3) for k, v in r.items() if k.endswith("_pct") or k.endswith("_added_s")}
    print(r["name"], "plain", r["plain"].get("wall_s_median"), "recorded", r["recorded"].get("wall_s_median"), extra,
          {k: v for k, v in r["recorded"].items() if k.endswith("_median")}, {k: v for k, v in r["plain"].items() if k.endswith("_median")})
PY
tar czf "$OUT/results.tgz" -C "$OUT" r && rm -rf "$R"
