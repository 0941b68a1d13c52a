#!/usr/bin/env bash
# Issue 31: the matrix over a 200,000-trial sweep, old binary against new, interleaved in one
# window. Each round starts `gauntlet serve` from each binary in turn on the same store (made once
# by `query_bench --fill`), sends one warm-up request, then REQS requests of each target, and prints
# one JSON line per request: binary, target, HTTP status, bytes, wall seconds, and the daemon's CPU
# seconds for it (utime + stime from /proc/PID/stat, before and after). The first round's answers
# of both binaries are compared byte for byte (same: true/false).
# Usage: bench/api/matrix_cpu.sh OLD_GAUNTLET NEW_GAUNTLET STORE_DIR [ROUNDS] [REQS]
# (STORE_DIR/gauntlet.db made first: build/bin/query_bench --fill STORE_DIR)
set -euo pipefail
old=$1 new=$2 dir=$3 rounds=${4:-3} reqs=${5:-3}
db=$dir/gauntlet.db
[ -f "$db" ] || { echo "no $db: run query_bench --fill $dir first" >&2; exit 1; }
mkdir -p "$dir/suites" "$dir/out"
tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }
targets=("/api/v1/matrix?sweep=1&rows=p0,p1" "/api/v1/matrix?sweep=1&rows=p0&cols=p1" "/api/v1/matrix?sweep=2&rows=p0,p1")
names=(rows_2 rows_cols wide_hidden)
for round in $(seq 1 "$rounds"); do
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin=$new
    rm -f "$dir/port"
    "$bin" serve --db "$db" --suites "$dir/suites" --listen 127.0.0.1:0 --port-file "$dir/port" \
      --query-timeout-ms 600000 --query-max-rows 100000000 >"$dir/daemon-$which.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 300); do [ -s "$dir/port" ] && break; sleep 0.1; done
    port=$(cat "$dir/port")
    curl -s -o /dev/null "http://127.0.0.1:$port${targets[0]}"  # warm-up: the store's pages in cache
    for i in "${!targets[@]}"; do
      for r in $(seq 1 "$reqs"); do
        out=$dir/out/$which-${names[$i]}.json
        c0=$(cpu $pid)
        t0=$(date +%s.%N)
        res=$(curl -s -o "$out" -w '%{http_code} %{size_download}' "http://127.0.0.1:$port${targets[$i]}")
        t1=$(date +%s.%N)
        c1=$(cpu $pid)
        echo "{\"round\": $round, \"binary\": \"$which\", \"target\": \"${names[$i]}\", \"status\": ${res% *}," \
             "\"bytes\": ${res#* }, \"wall_s\": $(echo "$t1 $t0" | awk '{printf "%.3f", $1 - $2}'), \"cpu_s\": $(echo "$c1 $c0" | awk '{printf "%.2f", $1 - $2}')," \
             "\"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
      done
    done
    kill -TERM $pid
    wait $pid || true
  done
  if [ "$round" = 1 ]; then
    for n in "${names[@]}"; do
      same=false
      cmp -s "$dir/out/old-$n.json" "$dir/out/new-$n.json" && same=true
      echo "{\"target\": \"$n\", \"same\": $same}"
    done
  fi
done
