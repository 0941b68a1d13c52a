#!/usr/bin/env bash
# GET /api/v1/trials/{id} under load (issue 2's target: 20,000 requests/s or more on loopback),
# measured with wrk against a real daemon; prints one JSON line with throughput and latency.
#   bench/api/wrk_trial.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
secs=${2:-10}
conns=${3:-64}
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
"$build/bin/gauntlet" serve --db "$dir/g.db" --listen 127.0.0.1:0 --port-file "$dir/port" \
  --suites "$root/bench/api/suites" --threads 2 --log-level warn >"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 200); do [[ -s "$dir/port" ]] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$dir/port")"
python3 - "$url" <<'PY'
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/api/v1/sweeps", data=json.dumps(
    {"suite": "bench-trivial", "parameters": {"a": ["0"]}}).encode(), headers={"Content-Type": "application/json"})
urllib.request.urlopen(req).read()
PY
out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency "$url/api/v1/trials/500")
python3 - "$conns" "$secs" <<PY
import json, re, sys
out = """$out"""
def ms(v):
    n, u = re.match(r"([\d.]+)(us|ms|s)", v).groups()
    return float(n) * {"us": 0.001, "ms": 1, "s": 1000}[u]
lat = dict(re.findall(r"\s+(50|75|90|99)%\s+(\S+)", out))
print(json.dumps({"bench": "get_trial_wrk", "connections": int(sys.argv[1]), "seconds": int(sys.argv[2]),
                  "requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
                  "latency_ms_p50": ms(lat["50"]), "latency_ms_p90": ms(lat["90"]), "latency_ms_p99": ms(lat["99"]),
                  "errors": "Non-2xx" in out or "Socket errors" in out}))
PY
