#!/usr/bin/env bash
# The classifier on real GPU runs (docs/CLASSIFIER.md "Checked on the GPU"): a daemon and a worker on
# the GPU machine run kernel programs under CTest and pytest cases as kernel projects run them
# (tests/gpu/verdicts), and every trial's verdict, signature and basis go to $OUT with the
# runners' raw output, each compared with what it must be on a GPU older than sm_100.
#   on the build machine:  scripts/gpu-verdicts.sh --stage   (binaries and libraries into .devbuild/)
#   on the GPU machine:    OUT=/some/dir scripts/gpu-verdicts.sh
set -uo pipefail
cd "$(dirname "$0")/.."
C=.devbuild
source scripts/h200-lib.sh
if [[ "${1:-}" == "--stage" ]]; then
  stage_binaries "$C" build/bin/gauntlet
  exit 0
fi
OUT=${OUT:-/tmp/gauntlet-verdicts}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
G="$PWD/$C/bin/gauntlet"
B=/tmp/gauntlet-verdicts-build
rm -rf "$B"
if ! { cmake -S tests/gpu/verdicts -B "$B" -G Ninja && cmake --build "$B"; } >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"
  exit 1
fi
# The runners' own output, as a user would paste it (for the corpus).
(cd "$B" && ctest --output-on-failure; echo "exit status $?") >"$OUT/ctest-all.txt" 2>&1
T="$PWD/tests/gpu/verdicts/test_verdicts.py"
(cd /tmp && python3 -m pytest "$T" -ra -p no:cacheprovider; echo "exit status $?") >"$OUT/pytest-all.txt" 2>&1
D=/tmp/gauntlet-verdicts-run
rm -rf "$D" && mkdir -p "$D"
start_fleet "$G" "$D" "$PWD/tests/gpu/verdicts/suites" "$OUT" gpu --pass-env LD_LIBRARY_PATH || exit 1
for s in gpu-verdicts-ctest gpu-verdicts-pytest; do
  echo "{\"suite\": \"$s\", \"prune\": false, \"reuse\": false}" >"$D/$s.json"
  "$G" submit "$D/$s.json" >>"$OUT/submit.log" 2>&1
done
python3 - "$GAUNTLET_SERVER" "$OUT" <<'PY'
import json, sys, time, urllib.request
base, out = sys.argv[1], sys.argv[2]
get = lambda p: json.load(urllib.request.urlopen(base + p))
t0 = time.time()
while time.time() - t0 < 400 and not all(get(f"/api/v1/sweeps/{i}")["finished"] for i in (1, 2)):
    time.sleep(2)
# What each case must be on a GPU older than sm_100 (an H100 or H200): docs/CLASSIFIER.md.
want = {("gpu-verdicts-ctest", "vec_add_ok"): "passed", ("gpu-verdicts-ctest", "vec_add_wrong"): "wrong_output",
        ("gpu-verdicts-ctest", "fp4_needs_sm100"): "unsupported", ("gpu-verdicts-ctest", "all"): "wrong_output",
        ("gpu-verdicts-pytest", "test_xpass_matmul"): "passed", ("gpu-verdicts-pytest", "test_skip_fp4"): "unsupported",
        ("gpu-verdicts-pytest", "test_pass_add"): "passed", ("gpu-verdicts-pytest", "test_"): "unsupported"}
rows, right = [], 0
for sweep in (1, 2):
    for t in get(f"/api/v1/trials?sweep={sweep}&limit=100")["items"]:
        full = get(f"/api/v1/trials/{t['id']}")
        key = (full["suite"], full["config"]["case"])
        ok = full["verdict"] == want.get(key)
        right += ok
        rows.append({"suite": key[0], "case": key[1], "want": want.get(key), "verdict": full["verdict"],
                     "signature": full["signature"], "basis": full.get("basis"), "unclassified": full.get("unclassified"),
                     "evidence": (full.get("result") or {}).get("evidence"), "right": ok})
json.dump({"right": right, "total": len(rows), "rows": rows}, open(f"{out}/verdicts.json", "w"), indent=1)
for r in rows:
    print(("ok  " if r["right"] else "MISS"), r["suite"], r["case"], "->", r["verdict"], r["signature"], f"[{r['basis']}]")
print(f"{right}/{len(rows)} right, {round(time.time() - t0)} s")
PY
"$G" nodes --format json >"$OUT/nodes.json" 2>&1
