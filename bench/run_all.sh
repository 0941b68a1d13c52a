#!/usr/bin/env bash
# Runs the CPU benchmarks (each prints one JSON line). GPU kernel benchmarks: bench/kernels/run.sh on
# a GPU machine (scripts/gpu-run.sh). Results and how they were taken: docs/BENCHMARKS.md.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b=${BUILD:-$root/build}
export GAUNTLET_BIN=$b/bin/gauntlet GAUNTLET_SOURCE_DIR=$root
run() { echo "# $*" >&2; "$@" 2>/dev/null | tail -1; }
run "$b/bin/sweep_bench"
run "$root/bench/api/wrk_trial.sh" "$b"
run "$b/bin/lease_bench" 16 5
run "$b/bin/e2e_bench" 4 5000
run "$b/bin/matrix_bench" 1000000
run "$b/bin/starvation_bench" 700 10 160000
[[ -x $b/bin/gauntlet-scheduler-bench ]] && run "$b/bin/gauntlet-scheduler-bench"
[[ -x $b/bin/gauntlet-classify-bench ]] && run "$b/bin/gauntlet-classify-bench"
[[ -x $b/bin/gauntlet-openai-client-bench ]] && run "$b/bin/gauntlet-openai-client-bench"
[[ -f $root/bench/dashboard/first_view.mjs ]] && (cd "$root" && run node bench/dashboard/first_view.mjs)
