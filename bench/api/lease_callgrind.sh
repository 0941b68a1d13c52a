#!/usr/bin/env bash
# The lease cycle's cost in instructions, which a shared or loaded machine does not change
# (docs/BENCHMARKS.md "Issue 31: the lease cycle's last costs"). The daemon runs under callgrind
# with instrumentation off, and it is switched on once the bench's four nodes are registered: the
# setup, the submit and the sweep's expansion are not counted, only the window of lease + result
# cycles. Prints one JSON line: the daemon's instructions per cycle. Compare runs of one window
# length only: part of the daemon's work goes by time, not by cycle (timers, the notifier's scans),
# and under callgrind a second holds 70 times fewer cycles (25 s: 427k a cycle; 10 s: 306k).
#   bench/api/lease_callgrind.sh BIN_DIR [SECONDS=25] [DAEMON=BIN_DIR/gauntlet] [OUT_FILE]
# BIN_DIR holds lease_bench; DAEMON may be another build's gauntlet (an A/B with one bench).
# Needs valgrind (callgrind_control, callgrind_annotate), curl and python3.
set -euo pipefail
bin=$(realpath "$1") secs=${2:-25} daemon=$(realpath "${3:-$1/gauntlet}")
out=${4:-$(mktemp -d)/callgrind.out}
wrap=$(mktemp)
trap 'rm -f "$wrap"' EXIT
printf '#!/bin/bash\nexec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=%q %q "$@"\n' "$out" "$daemon" >"$wrap"
chmod +x "$wrap"
GAUNTLET_BIN=$wrap "$bin/lease_bench" 4 "$secs" 5000 >"$out.json" 2>"$out.err" &
bench=$!
on=false
while kill -0 "$bench" 2>/dev/null && ! $on; do
  pid=$(pgrep -f -- "--callgrind-out-file=$out" | head -1 || true)
  port=""
  if [[ -n "$pid" ]]; then
    port=$(ss -ltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | sed 's/.*://' | head -1 || true)
  fi
  if [[ -n "$port" ]]; then
    n=$(curl -s "http://127.0.0.1:$port/api/v1/nodes" |
        python3 -c 'import json, sys
try: print(len(json.load(sys.stdin)["items"]))
except Exception: print(0)')
    if ((n >= 4)); then
      callgrind_control -i on "$pid" >/dev/null
      on=true
    fi
  fi
  $on || sleep 0.2
done
wait "$bench"
$on || { echo "the window started before instrumentation could be switched on" >&2; exit 1; }
total=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
python3 - "$out.json" "$total" "$out" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"bench": "lease_cycle_instructions", "cycles": r["cycles"], "errors": r["errors"],
                  "daemon_instructions": int(sys.argv[2]),
                  "daemon_instructions_per_cycle": round(int(sys.argv[2]) / max(1, r["cycles"])),
                  "profile": sys.argv[3]}))
EOF
