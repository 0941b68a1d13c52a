#!/usr/bin/env bash
# Issue 23's real run, on a node with 2 GPUs: `gauntlet serve` and one `gauntlet worker` that
# discovers both GPUs through NVML; the built-in torch-distributed suite then runs
#   1. two 1-GPU `visibility` trials at once (each must see exactly its own GPU, by UUID),
#   2. 2-GPU trials: all-reduce bus bandwidth, the row-parallel matmul against one GPU, visibility,
#   3. injected faults: a rank that raises, a rank that hangs (the worker must end every rank and
#      the verdict must name the rank that failed first, not the peer that timed out in NCCL),
#   4. the same program under torch.multiprocessing.spawn, its log judged by `gauntlet classify`.
# Results (trials, nodes, logs, summary.txt with a PASS/FAIL line per expectation) go to $OUT.
#   on the build machine:  scripts/h200-run.sh --stage      (the same .devbuild/ as issue 5's run)
#   on the GPU machine:    OUT=/some/dir scripts/h200x2-run.sh
# Not yet run: no 2-GPU machine was lent when it was written (docs/RESULTS-H200.md, "Plan").
set -uo pipefail
cd "$(dirname "$0")/.."
C=.devbuild
source scripts/h200-lib.sh
OUT=${OUT:-/tmp/gauntlet-h200x2}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on this machine (device KINDS.md)
G="$PWD/$C/bin/gauntlet"
[[ -x "$G" ]] || { echo "no $G: run scripts/h200-run.sh --stage on the build machine first" >&2; exit 2; }
nvidia-smi -L >"$OUT/nvidia-smi-L.txt" 2>&1
python3 -c 'import json, torch; print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "gpus": torch.cuda.device_count()}))' \
  >"$OUT/torch.json" 2>&1
D=/tmp/gauntlet-h200x2-run
rm -rf "$D" && mkdir -p "$D"
start_fleet "$G" "$D" "$PWD/suites" "$OUT" h200x2 --pass-env LD_LIBRARY_PATH --pass-env NCCL_NVLS_ENABLE || exit 1
for i in $(seq 100); do "$G" nodes --format json 2>/dev/null | grep -q h200x2 && break; sleep 0.2; done
"$G" nodes --format json >"$OUT/nodes-start.json" 2>&1

sub() { echo "$1" >"$D/s.json"; "$G" submit "$D/s.json" >>"$OUT/submit.log" 2>&1; }
# 1: two 1-GPU trials (bf16 and fp32 are the same check; they exist to run side by side).
sub '{"suite": "torch-distributed", "name": "2xH200: two 1-GPU trials at once",
      "parameters": {"test": ["visibility"], "dtype": ["bf16", "fp32"]}, "targets": [{"gpus": 1}],
      "prune": false, "reuse": false}'
# 2: 2-GPU trials.
sub '{"suite": "torch-distributed", "name": "2xH200: NCCL all-reduce, TP matmul, visibility",
      "parameters": {"test": ["allreduce", "tp_matmul", "visibility"], "dtype": ["bf16", "fp32"]},
      "prune": false, "reuse": false}'
# 3: faults (a 20 s NCCL timeout keeps the hang short).
sub '{"suite": "torch-distributed", "name": "2xH200: a rank that raises or hangs",
      "parameters": {"test": ["tp_matmul"], "dtype": ["bf16"], "fault": ["raise"], "fault_rank": ["1"],
                     "nccl_timeout_s": ["20"]},
      "include": [{"test": "allreduce", "dtype": "bf16", "fault": "hang", "fault_rank": "1", "nccl_timeout_s": "20"},
                  {"test": "allreduce", "dtype": "bf16", "fault": "raise", "fault_rank": "0", "nccl_timeout_s": "20"}],
      "prune": false, "reuse": false, "max_attempts": 1}'
python3 - "$GAUNTLET_SERVER" <<'PY'
import json, sys, time, urllib.request
base = sys.argv[1]
t0 = time.time()
while time.time() - t0 < 420:
    if all(json.load(urllib.request.urlopen(f"{base}/api/v1/sweeps/{i}"))["finished"] for i in (1, 2, 3)):
        break
    time.sleep(2)
print("sweeps finished after", round(time.time() - t0), "s")
PY
"$G" status --format json >"$OUT/sweeps.json"
"$G" nodes --format json >"$OUT/nodes.json"

# 4: torch.multiprocessing.spawn outside the worker; its own log judged by the classifier.
for fault in raise hang; do
  CUDA_VISIBLE_DEVICES=0,1 timeout 180 python3 suites/torch_distributed.py --spawn 2 --test allreduce \
    --fault "$fault" --fault-rank 1 --nccl-timeout-s 20 >"$OUT/spawn-$fault.log" 2>&1
  rc=$?
  "$G" classify "$OUT/spawn-$fault.log" --exit-code "$rc" >"$OUT/spawn-$fault.classified.json" 2>&1
done

python3 - "$GAUNTLET_SERVER" "$OUT" <<'PY'
import json, re, sys, urllib.request
base, out = sys.argv[1], sys.argv[2]
get = lambda p: urllib.request.urlopen(base + p).read().decode()
trials, lines = [], []
for sweep in (1, 2, 3):
    for t in json.loads(get(f"/api/v1/trials?sweep={sweep}&limit=1000"))["items"]:
        full = json.loads(get(f"/api/v1/trials/{t['id']}"))
        full["log"] = get(f"/api/v1/trials/{t['id']}/log")
        full["sweep"] = sweep
        trials.append(full)
json.dump(trials, open(f"{out}/trials.json", "w"), indent=1)

def check(ok, what):
    lines.append(("PASS " if ok else "FAIL ") + what)

def views(t):  # every rank's {"rank", "CUDA_VISIBLE_DEVICES", "device_count", "uuid", ...} from its log
    vs = []
    for m in re.finditer(r'\{"torch_distributed": .*\}', t["log"]):
        vs += json.loads(m.group(0))["torch_distributed"]["ranks"]
    return {v["rank"]: v for v in vs}.values()

one = [t for t in trials if t["sweep"] == 1]
check(len(one) == 2 and all(t["verdict"] == "passed" for t in one), "two 1-GPU visibility trials passed")
v1 = [v for t in one for v in views(t)]
check(all(v["device_count"] == 1 for v in v1), "each 1-GPU trial saw device_count() == 1")
check(len({v["uuid"] for v in v1}) == 2, "the two 1-GPU trials held different GPUs (UUIDs %s)" % sorted(v["uuid"] for v in v1))
if len(v1) == 2:
    a, b = v1
    check(a["start"] < b["end"] and b["start"] < a["end"], "the two 1-GPU trials ran at the same time")
two = [t for t in trials if t["sweep"] == 2]
for t in two:
    m = t.get("result", {}).get("metrics", {})
    check(t["verdict"] == "passed", f"2-GPU {t['config']['test']} {t['config']['dtype']}: {t['verdict']} {t['signature'] or ''} "
          + json.dumps({k: v.get("value") for k, v in m.items() if k in ("busbw_gbps", "rel_err", "rel_diff_tp_vs_single", "device_count")}))
    if t["config"]["test"] == "visibility":
        vs = list(views(t))
        check(len(vs) == 2 and len({v["uuid"] for v in vs}) == 2 and all(v["device_count"] == 2 for v in vs),
              "a 2-GPU trial's ranks each saw both GPUs and held different ones")
for t in (t for t in trials if t["sweep"] == 3):
    c = t["config"]
    want_rank = "rank" + c["fault_rank"]
    ev = t.get("result", {}).get("evidence", "")
    verdict_ok = (t["verdict"], t["signature"].startswith("timeout:rank_hang")) == ("timeout", True) if c["fault"] == "hang" \
        else t["verdict"] == "crashed" and "injected fault" in t["signature"]
    check(verdict_ok and want_rank in ev, f"fault {c['fault']} on {want_rank} ({c['test']}): {t['verdict']} {t['signature']} | {ev[:160]}")
for fault in ("raise", "hang"):
    try:
        c = json.load(open(f"{out}/spawn-{fault}.classified.json"))
    except Exception as e:
        c = {"error": str(e)}
    check(c.get("rank") == "rank1", f"torch.multiprocessing.spawn, rank 1 {fault}s: classify says {json.dumps(c)[:200]}")
open(f"{out}/summary.txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
kill %2 2>/dev/null; sleep 1; kill %1 2>/dev/null; wait
tail -5 "$OUT/worker.log"
