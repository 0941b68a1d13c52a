#!/usr/bin/env bash
# Issue 46 on the GPU machine: trials run as users of their own, in their own mount and PID
# namespaces, and what a GPU suite needs still works inside: CUDA, the kernel recorder, pytest,
# CTest, and a two-rank stage whose ranks share the one GPU and talk through gloo on the loopback.
# One script, everything under $OUT:
#   1. the node: cgroups, whether a trial's user can import torch, the worker's isolation line;
#   2. a daemon and a worker started with --trial-users on (its namespaces come with it), running
#      torch-sdpa and hf-attention (recorded kernels), the gpu-verdicts CTest and pytest suites, an
#      isolation probe on the GPU and the two-rank stage; each trial's verdict against what it must be;
#   3. bench/stage/stage_start_bench: a stage's start under each isolation, on this machine;
#   4. with E2E=1: e2e_bench 4 5000 without isolation, with trial users alone and with their namespaces.
#
#   on the build machine:  scripts/gpu-isolation.sh --stage   (a bundle in .devbuild/iso: carry .devbuild)
#   on the GPU machine:    OUT=/some/dir bash .devbuild/iso/run.sh
set -uo pipefail
if [[ "${1:-}" == "--stage" ]]; then
  cd "$(dirname "$0")/.."
  B=.devbuild/iso
  source scripts/h200-lib.sh
  stage_binaries "$B" build/bin/gauntlet build/bin/gauntlet-kernels build/bin/libgauntlet_kernrec.so \
    build/bin/stage_start_bench build/bin/e2e_bench /usr/local/cuda-13.0/lib64/libcupti.so.13
  mkdir -p "$B/bench-suites" && cp bench/api/suites/* "$B/bench-suites/"
  mkdir -p "$B/suites" "$B/verdicts"
  cp suites/torch-sdpa.json suites/torch_sdpa.py suites/torch_sdpa_probe.py suites/hf-attention.json suites/hf_attention.py "$B/suites/"
  cp tests/gpu/verdicts/suites/*.json "$B/suites/"
  cp tests/gpu/verdicts/*.cu tests/gpu/verdicts/*.cuh tests/gpu/verdicts/CMakeLists.txt "$B/verdicts/"
  cp tests/gpu/verdicts/test_verdicts.py "$B/"   # the pytest suite's {suite_dir}/../test_verdicts.py
  cp tests/gpu/isolation/*.json tests/gpu/isolation/*.py "$B/suites/"
  cp "$0" "$B/run.sh"
  cp scripts/h200-lib.sh "$B/"
  du -sh "$B"
  exit 0
fi
SRC="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-/tmp/gauntlet-isolation}
mkdir -p "$OUT"
S="$OUT/summary.txt"
say() { echo "$@" | tee -a "$S"; }
# Where every trial user can reach it (the working copy may sit under a folder closed to others).
B=/opt/gauntlet-iso
rm -rf "$B" && mkdir -p "$B" && cp -r "$SRC"/. "$B"/ && chmod -R a+rX "$B"
source "$B/h200-lib.sh"
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
G="$B/bin/gauntlet"

say "== 1. the node"
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r
  echo "cgroup fs: $(stat -fc %T /sys/fs/cgroup)"; cat /proc/self/cgroup | head -3
  echo "python3: $(command -v python3)"
  setpriv --reuid 61999 --regid 61999 --clear-groups python3 -c 'import torch; print("trial user imports torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1
} 2>&1 | tee -a "$S"
(cmake -S "$B/verdicts" -B "$B/verdicts-build" -G Ninja && cmake --build "$B/verdicts-build") >"$OUT/verdicts-build.log" 2>&1 \
  || { say "verdicts build failed"; tail -20 "$OUT/verdicts-build.log"; }
chmod -R a+rX "$B"
# CTest writes its log into the build folder it runs in (Testing/): one copy per trial, each a user
# of its own (a shared one is infra_error:runner_cannot_write for all but the first).
for c in vec_add_ok vec_add_wrong fp4_needs_sm100; do cp -a "$B/verdicts-build" "$B/verdicts-build-$c"; done
chmod -R a+rwX "$B"/verdicts-build-*

say "== 2. daemon + worker, --trial-users on"
D=/var/tmp/gauntlet-iso-run
rm -rf "$D" && mkdir -p "$D" && chmod 0711 "$D"
start_fleet "$G" "$D" "$B/suites" "$OUT" gpu --trial-users on --pass-env LD_LIBRARY_PATH || exit 1
for i in $(seq 100); do grep -q "registered as node" "$OUT/worker.log" && break; sleep 0.2; done
grep -hE "isolation|stage limits|kernel recorder" "$OUT/worker.log" | tee -a "$S"
sub() { echo "$1" >"$D/s.json"; "$G" submit "$D/s.json" >>"$OUT/submit.log" 2>&1; }
if [[ "${ONLY:-}" != ctest ]]; then
sub '{"suite": "torch-sdpa", "prune": false, "reuse": false, "parameters": {"backend": ["FLASH_ATTENTION", "MATH"], "dtype": ["bf16", "fp32"], "head_dim": ["128"], "select": ["sdpa_kernel"]}}'
sub '{"suite": "hf-attention", "prune": false, "reuse": false, "parameters": {"attn": ["eager", "sdpa"], "dtype": ["bf16"], "output_attentions": ["off"]}}'
sub '{"suite": "gpu-verdicts-pytest", "prune": false, "reuse": false}'
sub '{"suite": "iso-probe", "prune": false, "reuse": false}'
sub '{"suite": "iso-ranks", "prune": false, "reuse": false}'
fi
for c in vec_add_ok vec_add_wrong fp4_needs_sm100; do
  sub "{\"suite\": \"gpu-verdicts-ctest\", \"prune\": false, \"reuse\": false, \"parameters\": {\"case\": [\"$c\"], \"build\": [\"$B/verdicts-build-$c\"]}}"
done
tail -6 "$OUT/submit.log"
python3 - "$GAUNTLET_SERVER" "$OUT" "${FOLLOW_S:-300}" <<'PY' | tee -a "$S"
import json, sys, time, urllib.request
base, out, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
get = lambda p: json.load(urllib.request.urlopen(base + p))
t0 = time.time()
while time.time() - t0 < limit:
    try:
        if all(s["finished"] for s in get("/api/v1/sweeps?limit=100")["items"]): break
    except Exception as e:
        print("follow:", e)
    time.sleep(2)
print("followed", round(time.time() - t0), "s")
# What each must be on a GPU older than sm_100 (docs/CLASSIFIER.md "Checked on the GPU"), inside the isolation.
want = {("gpu-verdicts-ctest", "vec_add_ok"): "passed", ("gpu-verdicts-ctest", "vec_add_wrong"): "wrong_output",
        ("gpu-verdicts-ctest", "fp4_needs_sm100"): "unsupported", ("gpu-verdicts-pytest", "test_xpass_matmul"): "passed",
        ("gpu-verdicts-pytest", "test_skip_fp4"): "unsupported", ("gpu-verdicts-pytest", "test_pass_add"): "passed",
        ("gpu-verdicts-pytest", "test_"): "unsupported", ("iso-probe", "1"): "passed", ("iso-ranks", "1"): "passed"}
rows, right, judged = [], 0, 0
for sweep in sorted(s["id"] for s in get("/api/v1/sweeps?limit=100")["items"]):
    for t in get(f"/api/v1/trials?sweep={sweep}&limit=100")["items"]:
        full = get(f"/api/v1/trials/{t['id']}")
        cfg = full["config"]
        key = (full["suite"], cfg.get("case") or cfg.get("n") or "")
        stages = (full.get("result") or {}).get("stages") or [{}]
        k = full.get("kernels") or {}
        row = {"id": full["id"], "suite": full["suite"], "config": cfg, "verdict": full["verdict"], "signature": full.get("signature"),
               "want": want.get(key), "isolation": stages[-1].get("isolation"), "limits": stages[-1].get("limits"),
               "dispatch": stages[-1].get("dispatch", {}).get("status"), "kernel_processes": k.get("processes"),
               "kernels_top": [x.get("family") for x in (k.get("top") or [])[:3]]}
        if row["want"]:
            judged += 1
            right += row["want"] == row["verdict"]
        rows.append(row)
        print(json.dumps(row))
json.dump({"right": right, "judged": judged, "rows": rows}, open(f"{out}/trials.json", "w"), indent=1)
print(f"RESULT {right}/{judged} as they must be; {len(rows)} trials")
PY
for s in iso-probe iso-ranks gpu-verdicts-ctest hf-attention; do
  id=$(python3 -c "import json,sys; r=[x for x in json.load(open('$OUT/trials.json'))['rows'] if x['suite']=='$s']; print(r[0]['id'] if r else '')")
  [[ -n "$id" ]] && "$G" logs "$id" >"$OUT/log-$s.txt" 2>&1 && { say "-- $s log"; grep -vE "^\s*$" "$OUT/log-$s.txt" | tail -25 | tee -a "$S"; }
done
"$G" nodes --format json >"$OUT/nodes.json" 2>&1
kill %2 2>/dev/null; sleep 1; kill %1 2>/dev/null; wait

[[ "${ONLY:-}" == ctest ]] && exit 0
say "== 3. stage start on this machine (ms; worker-sized process)"
"$B/bin/stage_start_bench" 1000 worker-sized >"$OUT/stage_start.json" 2>&1
python3 -c "import json; d=json.load(open('$OUT/stage_start.json')); print({m: (round(v['p50_ms'],3), round(v['p90_ms'],3), round(v['mean_ms'],3)) for m, v in d['modes'].items()})" | tee -a "$S"

[[ "${E2E:-0}" == 1 ]] || exit 0
say "== 4. e2e_bench 4 5000 (trials/s, worker CPU ms per trial)"
# e2e_bench reads its suites from the build machine's source folder, compiled in.
src=$(strings "$B/bin/e2e_bench" | grep -m1 -E '^/.*/bench/api/suites$' | sed 's|/bench/api/suites$||')
[[ -z "$src" ]] && src=/work/main
mkdir -p "$src/bench/api" && ln -sfn "$B/bench-suites" "$src/bench/api/suites"
for r in 1 2; do
  for m in "" users-no-ns users; do
    GAUNTLET_BIN="$G" timeout 120 "$B/bin/e2e_bench" 4 5000 $m 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('${m:-plain}', round(d['trials_per_s']), round(d['workers_cpu_ms_per_trial'], 2))" | tee -a "$S"
  done
done
