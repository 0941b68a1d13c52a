#!/usr/bin/env python3
"""Gauntlet vs a Slurm job array, same machine, same run (docs/BENCHMARKS.md).

N trivial trials (`true`) through a Gauntlet daemon with local workers, then the same N `true`
commands as one Slurm job array (`sbatch --array=1-N`) on a private one-node Slurm started by
scripts/slurm-test-env.sh. Both get the machine's CPUs as their concurrency (the worker runs one trial
per CPU, Slurm one array task per CPU). For each: wall time from submit to the last command done,
and submit-to-first-start latency, both measured the same way (polling every 5 ms from this process).
Prints JSON.

    python3 bench/slurm/slurm_bench.py --gauntlet build/bin/gauntlet [--trials 1000] [--out FILE]
"""
import argparse, json, os, platform, shutil, subprocess, sys, tempfile, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POLL = 0.005
SLURM_TUNING = "SchedulerParameters=sched_min_interval=0,batch_sched_delay=0,default_queue_depth=1000"


def http(url, body=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(POLL)
    raise SystemExit("timed out waiting for " + what)


def bench_gauntlet(exe, n, work):
    cpus = os.cpu_count()
    procs = []
    try:
        port_file = os.path.join(work, "port")
        procs.append(subprocess.Popen([exe, "serve", "--db", os.path.join(work, "g.db"), "--listen", "127.0.0.1:0",
                                       "--port-file", port_file, "--suites", os.path.join(HERE, "suites")],
                                      stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "serve.log"), "w")))
        wait_for(lambda: os.path.exists(port_file) and open(port_file).read().strip(), 30, "the daemon")
        url = "http://127.0.0.1:" + open(port_file).read().strip()
        procs.append(subprocess.Popen([exe, "worker", "--server", url, "--name", "local", "--workdir",
                                       os.path.join(work, "work"), "--preflight", "off", "--max-trials", str(cpus)],
                                      stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "worker.log"), "w")))
        wait_for(lambda: any(x.get("waiting") for x in http(url + "/api/v1/nodes")["items"]), 30, "the worker")
        req = {"suite": "bench-true", "parameters": {"i": [str(i) for i in range(1, n + 1)]},
               "prune": False, "reuse": False, "max_trials": n}
        t0 = time.time()
        sweep = http(url + "/api/v1/sweeps", req)["id"]
        first = None
        while True:
            s = http(url + "/api/v1/sweeps/%d" % sweep)
            now = time.time()
            if first is None and (s["by_state"].get("running", 0) or s["by_state"].get("leased", 0) or s["done"]):
                first = now - t0
            if s["finished"]:
                wall = now - t0
                break
            time.sleep(POLL)
        passed = s["by_verdict"].get("passed", 0)
        # The daemon's own record (ms): first started_at and last finished_at.
        trials, after = [], None
        while True:
            page = http(url + "/api/v1/trials?limit=1000&sweep=%d%s" % (sweep, "&after=%d" % after if after else ""))
            trials += page["items"]
            if not page.get("next"):
                break
            after = page["next"]
        recorded_first = min(t["started_at"] for t in trials if t["started_at"]) / 1000 - t0
        recorded_wall = max(t["finished_at"] for t in trials if t["finished_at"]) / 1000 - t0
        return {"trials": n, "passed": passed, "concurrency": cpus, "wall_s": round(wall, 3),
                "first_start_s": round(first, 4), "recorded_first_start_s": round(recorded_first, 4),
                "recorded_wall_s": round(recorded_wall, 3), "per_second": round(n / wall, 1)}
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def bench_slurm(n, work):
    env_dir = os.path.join(work, "slurm")
    # Slurm's high-throughput settings (its HTC guide): schedule on every event, no batching delay.
    up = subprocess.run(["bash", os.path.join(ROOT, "scripts", "slurm-test-env.sh"), "up", env_dir],
                        capture_output=True, text=True, env=dict(os.environ, SLURM_TEST_EXTRA_CONF=SLURM_TUNING))
    try:
        if up.returncode != 0:
            return {"error": "scripts/slurm-test-env.sh up exited %d: %s" % (up.returncode, up.stderr.strip()[-2000:])}
        env = dict(os.environ, SLURM_CONF=os.path.join(env_dir, "slurm.conf"))
        cpus = int(subprocess.run(["sinfo", "-h", "-o", "%c"], env=env, capture_output=True, text=True).stdout.split()[0])

        def squeue(*args):
            return subprocess.run(["squeue", "-h"] + list(args), env=env, capture_output=True, text=True).stdout.split()

        t0 = time.time()
        job = subprocess.run(["sbatch", "--parsable", "--array=1-%d" % n, "--output=/dev/null", "--cpus-per-task=1",
                              "--job-name=bench-true", "--wrap", "true"], env=env, capture_output=True, text=True,
                             check=True).stdout.strip().split(";")[0]
        first = None
        while True:
            # Tasks not yet finished, by state; the array's pending remainder is one line ("ID_[k-N]").
            states = squeue("-j", job, "-r", "-o", "%T")
            now = time.time()
            if first is None and (any(s in ("RUNNING", "COMPLETING") for s in states) or len(states) < n):
                first = now - t0
            if not states:
                wall = now - t0
                break
            time.sleep(POLL if first is None else 0.05)
        return {"tasks": n, "settings": SLURM_TUNING, "concurrency": cpus, "wall_s": round(wall, 3),
                "first_start_s": round(first, 4), "per_second": round(n / wall, 1)}
    finally:
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "slurm-test-env.sh"), "down", env_dir])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gauntlet", default=os.path.join(ROOT, "build", "bin", "gauntlet"))
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--out", help="also write the JSON here")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gauntlet-slurm-bench-")
    try:
        g = bench_gauntlet(os.path.abspath(a.gauntlet), a.trials, work)
        s = bench_slurm(a.trials, work)
        version = subprocess.run(["slurmctld", "-V"], capture_output=True, text=True).stdout.strip()
        out = {"bench": "gauntlet_vs_slurm_array", "date": time.strftime("%Y-%m-%d"),
               "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                           "mem_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
                           "slurm": version},
               "gauntlet": g, "slurm": s}
        if "wall_s" in s:
            out["wall_ratio_slurm_over_gauntlet"] = round(s["wall_s"] / g["wall_s"], 2)
            out["first_start_ratio_slurm_over_gauntlet"] = round(s["first_start_s"] / g["first_start_s"], 2)
            out["goal_5x_met"] = out["wall_ratio_slurm_over_gauntlet"] >= 5
        text = json.dumps(out, indent=2)
        print(text)
        if a.out:
            open(a.out, "w").write(text + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
