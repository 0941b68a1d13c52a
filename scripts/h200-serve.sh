#!/usr/bin/env bash
# Issue 22's real run: `gauntlet serve` and a `gauntlet worker` that discovers the GPU through NVML,
# the hf-serve suite (suites/hf-serve.json: a transformers-based OpenAI server per attention
# implementation x dtype x torch.compile) submitted as one sweep, and the CPU integration test of
# the same server (tests/integration/hf_serve_test.cc) beside it. Everything it finds goes to $OUT
# (at most 8 files: the device tool brings back no more).
#   on the build machine:  scripts/h200-serve.sh --stage   (fills .devbuild/ with gauntlet, the test
#                                                           binary, the shared libraries the GPU
#                                                           machine lacks, and share/gauntlet/)
#   on the GPU machine:    OUT=/some/dir FOLLOW_S=440 scripts/h200-serve.sh
#                          OUT=/some/dir scripts/h200-serve.sh --probe CFG...   (the server alone,
#                          suites/hf-serve/probe.py, no Gauntlet: CFG is ATTN:DTYPE:COMPILE[:FAULT])
set -uo pipefail
cd "$(dirname "$0")/.."
C=.devbuild
if [[ "${1:-}" == "--stage" ]]; then
  source scripts/h200-lib.sh
  stage_binaries "$C" build/bin/gauntlet build/bin/hf_serve_test
  # The install layout beside the copied binary: serve finds its dashboard at ../share/gauntlet/web.
  mkdir -p "$C/share/gauntlet" && cp -r web suites "$C/share/gauntlet/"
  du -sh "$C"
  exit 0
fi
OUT=${OUT:-/tmp/gauntlet-h200-serve}
FOLLOW_S=${FOLLOW_S:-440}
mkdir -p "$OUT"
if [[ "${1:-}" == "--probe" ]]; then
  shift
  python3 suites/hf-serve/hf_serve.py --fingerprint
  python3 suites/hf-serve/probe.py "$@" | tee "$OUT/probe.jsonl"
  exit 0
fi
export LD_LIBRARY_PATH="$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
G="$PWD/$C/bin/gauntlet"
D=/tmp/gauntlet-h200-serve-run
rm -rf "$D" && mkdir -p "$D" "$D/suites"
cp suites/hf-serve.json "$D/suites/" && cp -r suites/hf-serve "$D/suites/"
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 suites/hf-serve/hf_serve.py --fingerprint
  python3 -c 'import transformers.utils as u; print("flash_attn available:", u.is_flash_attn_2_available())' 2>&1 | tail -1
} >"$OUT/meta.txt" 2>&1

# The CPU test of the same server, on a daemon and worker of its own (it takes a few cores for a
# minute while the GPU sweep starts; its server runs with one thread).
# CPU_TEST=0 leaves it out; SWEEP_JSON='{...}' submits that sweep instead of the one below.
if [[ "${CPU_TEST:-1}" != 0 ]]; then
  (GAUNTLET_BIN="$G" GAUNTLET_SOURCE_DIR="$PWD" "$C/bin/hf_serve_test" >"$OUT/cpu-test.log" 2>&1; echo "exit $?" >>"$OUT/cpu-test.log") &
fi

"$G" serve --db "$D/gauntlet.db" --listen 127.0.0.1:0 --port-file "$D/port" --suites "$D/suites" >"$D/daemon.log" 2>&1 &
daemon=$!
for i in $(seq 100); do [[ -s "$D/port" ]] && break; sleep 0.1; done
export GAUNTLET_SERVER="http://127.0.0.1:$(cat "$D/port")"
"$G" worker --workdir "$D/work" --name h200 >"$D/worker.log" 2>&1 &
worker=$!
# The reference, then the configs in the order they matter (a run cut short keeps the first ones):
# the perturbed layer, a real refusal, the other backends and dtypes, compile, flex attention.
cat >"$D/sweep.json" <<'JSON'
{"suite": "hf-serve", "name": "H200: hf-serve attention x dtype x compile, eager fp32 reference",
 "parameters": {"attn": ["eager"], "dtype": ["fp32"], "compile": ["off"], "fault": ["none"]},
 "include": [{"attn": "sdpa", "dtype": "fp32", "compile": "off", "fault": "layer"},
             {"attn": "flash_attention_2", "dtype": "bf16", "compile": "off", "fault": "none"},
             {"attn": "sdpa", "dtype": "fp32", "compile": "off", "fault": "none"},
             {"attn": "sdpa", "dtype": "bf16", "compile": "off", "fault": "none"},
             {"attn": "eager", "dtype": "bf16", "compile": "off", "fault": "none"},
             {"attn": "sdpa", "dtype": "fp16", "compile": "off", "fault": "none"},
             {"attn": "eager", "dtype": "fp16", "compile": "off", "fault": "none"},
             {"attn": "sdpa", "dtype": "bf16", "compile": "on", "fault": "none"},
             {"attn": "flex_attention", "dtype": "bf16", "compile": "off", "fault": "none"}]}
JSON
[[ -n "${SWEEP_JSON:-}" ]] && echo "$SWEEP_JSON" >"$D/sweep.json"
"$G" submit "$D/sweep.json" >"$OUT/submit.log" 2>&1
python3 - "$GAUNTLET_SERVER" "$FOLLOW_S" <<'PY'
import json, sys, time, urllib.request
base, limit = sys.argv[1], float(sys.argv[2])
t0 = time.time()
done = False
while time.time() - t0 < limit:
    s = json.load(urllib.request.urlopen(f"{base}/api/v1/sweeps/1"))
    if s["finished"]:
        done = True
        break
    time.sleep(2)
print("sweep", "finished" if done else "NOT finished", "after", round(time.time() - t0), "s")
PY
python3 - "$GAUNTLET_SERVER" "$OUT" <<'PY'
import json, sys, urllib.request
base, out = sys.argv[1], sys.argv[2]
get = lambda p: urllib.request.urlopen(base + p).read().decode()
try:
    open(f"{out}/matrix.csv", "w").write(get("/api/v1/matrix?suite=hf-serve&rows=attn,dtype&cols=fault&format=csv"))
except Exception as e:
    print("matrix:", e)
trials, logs = [], []
for t in json.loads(get("/api/v1/trials?sweep=1&limit=1000"))["items"]:
    trials.append(json.loads(get(f"/api/v1/trials/{t['id']}")))
    logs.append(f"######## trial {t['id']} {json.dumps(t['config'], sort_keys=True)} {t['verdict']}\n" +
                get(f"/api/v1/trials/{t['id']}/log"))
json.dump({"trials": trials, "nodes": json.loads(get("/api/v1/nodes"))}, open(f"{out}/trials.json", "w"), indent=1)
open(f"{out}/logs.txt", "w").write("\n".join(logs))
keys = ["ready_s", "first_smoke_s"] + [f"{m}@c{c}" for c in (1, 8, 32) for m in
        ("output_tok_s", "ttft_ms_p50", "itl_ms_p50", "client_cpu_us_per_req")]
for t in sorted(trials, key=lambda t: t["id"]):
    m = (t.get("result") or {}).get("metrics", {})
    c = t["config"]
    print(t["id"], c["attn"], c["dtype"], c["compile"], c["fault"], t["verdict"], t["signature"] or "",
          " ".join(f"{k}={m[k]['value']:.4g}" for k in keys if k in m))
PY
kill "$worker" 2>/dev/null; sleep 1; kill "$worker" 2>/dev/null; wait "$worker" 2>/dev/null  # the second signal stops a running trial
kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null
wait  # the CPU test
cat "$D/daemon.log" "$D/worker.log" >"$OUT/service.log"
tail -3 "$OUT/cpu-test.log"
