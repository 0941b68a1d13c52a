# What the scripts that run gauntlet on a lent GPU machine share (h200-run.sh, h200x2-run.sh,
# h200-serve.sh, h200-kernrec.sh, h200-drift.sh). Source it: it only defines functions.

# stage_binaries DIR FILE...: a folder that runs on the GPU machine: the files into DIR/bin (links
# followed, debug info stripped) and into DIR/lib the shared libraries that machine lacks (Ubuntu
# 24.04 has no spdlog/fmt/yaml-cpp/gtest/pugixml, and its libre2 is another soname than Debian 12's
# libre2.so.9; Debian's re2 needs no abseil). DIR is emptied first.
stage_binaries() {
  local dir=$1 b l
  shift
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib"
  cp -L "$@" "$dir/bin/"
  strip --strip-debug "$dir/bin/"*
  for b in "$dir/bin/"*; do
    for l in $(ldd "$b" 2>/dev/null | awk '/=> \//{print $3}' | grep -E 'spdlog|fmt|yaml-cpp|sqlite3|gtest|re2|absl|pugixml'); do
      cp -Ln "$l" "$dir/lib/"
    done
  done
}

# start_fleet GAUNTLET RUNDIR SUITES LOGDIR NAME [WORKER_FLAG...]: `gauntlet serve` on a free
# loopback port (database and port file in RUNDIR, suites from SUITES), GAUNTLET_SERVER exported
# for it, then one `gauntlet worker` named NAME working in RUNDIR/work; their logs are
# LOGDIR/daemon.log and LOGDIR/worker.log. Both run in the background as jobs %1 and %2. Returns 1,
# with the daemon log's tail, when the daemon gives no port within 10 s.
start_fleet() {
  local g=$1 d=$2 suites=$3 logs=$4 name=$5 i
  shift 5
  "$g" serve --db "$d/gauntlet.db" --listen 127.0.0.1:0 --port-file "$d/port" --suites "$suites" >"$logs/daemon.log" 2>&1 &
  for i in $(seq 100); do [[ -s "$d/port" ]] && break; sleep 0.1; done
  # A daemon that did not start (a library missing there, say) is said at once, not waited on.
  [[ -s "$d/port" ]] || { echo "the daemon did not start:"; tail -5 "$logs/daemon.log"; return 1; }
  export GAUNTLET_SERVER="http://127.0.0.1:$(cat "$d/port")"
  "$g" worker --workdir "$d/work" --name "$name" "$@" >"$logs/worker.log" 2>&1 &
}
