#!/usr/bin/env bash
# The fuzz ctests (tests/fuzz/CMakeLists.txt; docs/DECISIONS.md "Fuzzing").
#   fuzz.sh build SRC DIR                  configure DIR as the clang fuzz build (once), build the harnesses
#   fuzz.sh run SRC DIR NAME SECONDS [FACTOR]
#                                          replay tests/fuzz/corpus/NAME, then fuzz NAME for SECONDS
#                                          (or $GAUNTLET_FUZZ_SECONDS) times FACTOR (default 1)
# Exits 77 (ctest: skipped) when clang or libFuzzer is missing, saying so.
set -euo pipefail
mode=$1 src=$2 dir=$3

# libFuzzer is a clang runtime library (Debian: libclang-rt-14-dev, which clang only recommends):
# a missing one shows only when linking with -fsanitize=fuzzer, so try exactly that.
have_libfuzzer() {
  command -v clang++ >/dev/null || { echo "SKIP fuzz: clang++ is not installed (scripts/install-deps.sh installs it)"; return 1; }
  local t
  t=$(mktemp -d)
  printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' >"$t/p.cc"
  if ! clang++ -fsanitize=fuzzer,address,undefined "$t/p.cc" -o "$t/p" 2>"$t/err"; then
    echo "SKIP fuzz: clang++ cannot link -fsanitize=fuzzer (libclang-rt-dev missing?):"; head -3 "$t/err"
    rm -rf "$t"; return 1
  fi
  rm -rf "$t"
}
have_libfuzzer || exit 77

case "$mode" in
  build)
    if [[ ! -f "$dir/build.ninja" ]]; then
      mkdir -p "$dir"
      # A failed configure leaves no build.ninja, so the next run configures again.
      cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Fuzz \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGAUNTLET_FUZZ=ON >"$dir/configure.log" 2>&1 ||
        { cat "$dir/configure.log"; exit 1; }
    fi
    # Only the harnesses and the layers they link: the app, CLI and Slurm layers are not built.
    time cmake --build "$dir" --target fuzz_all -j "${GAUNTLET_FUZZ_JOBS:-2}"
    ;;
  run)
    name=$4 seconds=$5 factor=${6:-1}
    bin="$dir/bin/fuzz_$name"
    [[ -x "$bin" ]] || { echo "fuzz_$name was not built: see the fuzz_build test"; exit 1; }
    seeds="$src/tests/fuzz/corpus/$name"
    # New inputs go to a scratch corpus in the fuzz build, never into the committed one; findings
    # go to artifacts/ there, named by the run's output.
    work="$dir/corpus/$name" art="$dir/artifacts/$name"
    mkdir -p "$work" "$art"
    dict=()
    [[ -f "$src/tests/fuzz/$name.dict" ]] && dict=(-dict="$src/tests/fuzz/$name.dict")
    seconds=$(( ${GAUNTLET_FUZZ_SECONDS:-$seconds} * factor ))
    echo "fuzz_$name: $(ls "$seeds" | wc -l) seeds, ${seconds}s"
    log="$dir/logs/$name.log"
    mkdir -p "$dir/logs"
    # -timeout: an input that takes seconds is a finding (a loop, an expansion out of bounds), not
    # patience; -rss_limit_mb likewise for memory. -error_exitcode: libFuzzer's own default is 77,
    # which ctest would read as "skipped".
    flags=(-timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1)
    set +e
    # First every committed input once, whole: the regression cases among them are larger than
    # -max_len, which would cut them short in the fuzzing run.
    "$bin" "${flags[@]}" "$seeds"/* >"$log" 2>&1
    rc=$? failed="a committed input in $seeds/ (named in the report)"
    if ((rc == 0)); then
      # A fixed seed (docs/DECISIONS.md "Fuzzing"): `make test` explores the same mutations on every
      # run, so a red CI names a finding, not a lucky draw; GAUNTLET_FUZZ_SEED=0 draws a new one.
      "$bin" "${flags[@]}" -seed="${GAUNTLET_FUZZ_SEED:-1}" -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 \
        -artifact_prefix="$art/" "${dict[@]}" "$work" "$seeds" >>"$log" 2>&1
      rc=$? failed="the input written to $art/ (named in the report)"
    fi
    set -e
    ((rc != 77)) || rc=1  # whatever exits 77 here failed: it must not read as skipped
    if ((rc != 0)); then
      # The report without the progress lines: the sanitizer's stack, the harness's message, the input.
      grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)|^[[:space:]]+NEW_FUNC' "$log" | tail -n 150
      echo "fuzz_$name FAILED (exit $rc) on $failed; reproduce with: $bin FILE"
      echo "fix it, then commit the input under tests/fuzz/corpus/$name/ as a regression case"
    else
      grep -E '^(INFO: seed corpus|#[0-9]+[[:space:]]+(INITED|DONE))|^stat::(number_of_executed_units|peak_rss_mb|new_units_added)|^Executed .* in [0-9]{4,} ms' "$log" || tail -n 5 "$log"
    fi
    exit "$rc"
    ;;
  *) echo "usage: fuzz.sh build SRC DIR | run SRC DIR NAME SECONDS [FACTOR]" >&2; exit 2 ;;
esac
