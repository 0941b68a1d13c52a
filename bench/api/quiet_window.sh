#!/usr/bin/env bash
# The speed targets of issue 31 in one quiet window: lease_bench 16 6 and e2e_bench 4 5000, an older
# build against this one, interleaved (old, new, old, new ...), pinned to two cores (taskset -c 2,3,
# the dev machine's size) and unpinned, RUNS rounds. Each build is a folder of bin/ (gauntlet,
# lease_bench, e2e_bench), lib/ (the shared libraries a bare machine lacks) and src/bench/api/suites.
#   stage (build machine):  bench/api/quiet_window.sh --stage NAME BUILD_DIR SOURCE_DIR DEST
#                           (DEST/NAME.tgz; the benches' compiled-in source path is kept in DEST/NAME.src)
#   run (quiet machine):    OUT=dir bench/api/quiet_window.sh DEST [RUNS=3]
set -uo pipefail
if [[ "${1:-}" == "--stage" ]]; then
  name=$2 build=$3 src=$4 dest=$5
  t=$(mktemp -d)
  mkdir -p "$t/bin" "$t/lib" "$t/src/bench/api" "$dest"
  cp "$build/bin/gauntlet" "$build/bin/lease_bench" "$build/bin/e2e_bench" "$t/bin/"
  strip --strip-all "$t/bin/"*
  cp -r "$src/bench/api/suites" "$t/src/bench/api/"
  for b in gauntlet lease_bench e2e_bench; do
    ldd "$build/bin/$b" | awk '/=> \//{print $3}' | grep -E 'spdlog|fmt|yaml-cpp|sqlite3|re2|absl|pugixml|gtest' || true
  done | sort -u | while read -r l; do cp -L "$l" "$t/lib/"; done
  tar -C "$t" -czf "$dest/$name.tgz" . && echo "$src" >"$dest/$name.src" && rm -rf "$t"
  du -sh "$dest/$name.tgz"
  exit 0
fi
dest=$(cd "$1" && pwd) runs=${2:-3}
OUT=${OUT:-/tmp/quiet-window}
mkdir -p "$OUT"
for v in old new; do
  rm -rf "/tmp/qw/$v" && mkdir -p "/tmp/qw/$v" && tar -C "/tmp/qw/$v" -xzf "$dest/$v.tgz"
  # The benches read their suites from the source folder they were built in.
  s=$(cat "$dest/$v.src") && mkdir -p "$s/bench/api" && cp -r "/tmp/qw/$v/src/bench/api/suites" "$s/bench/api/"
done
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; uptime; } | tee "$OUT/machine.txt"
bench() {  # VERSION PIN BENCH ARGS...
  local v=$1 pin=$2 b=$3
  shift 3
  local pre=()
  [[ $pin == pinned ]] && pre=(taskset -c 2,3)
  local line
  line=$(LD_LIBRARY_PATH=/tmp/qw/$v/lib GAUNTLET_BIN=/tmp/qw/$v/bin/gauntlet timeout 90 "${pre[@]}" "/tmp/qw/$v/bin/$b" "$@" 2>>"$OUT/stderr.txt" | tail -1)
  echo "{\"version\":\"$v\",\"pin\":\"$pin\",\"at\":\"$(date -u +%T)\",\"result\":${line:-null}}" | tee -a "$OUT/results.jsonl"
}
for r in $(seq "$runs"); do
  for pin in pinned unpinned; do
    for v in old new; do bench "$v" "$pin" lease_bench 16 6; done
    for v in old new; do bench "$v" "$pin" e2e_bench 4 5000; done
  done
done
uptime | tee -a "$OUT/machine.txt"
