#!/usr/bin/env python3
"""Runs hf_serve.py directly for each configuration given (ATTN:DTYPE:COMPILE[:FAULT]) and prints, as
one JSON line each: time to ready, one completion with top-5 logprobs, one streamed chat answer,
8 concurrent completions' wall time, and the server's output tail. A bring-up check of the server
alone, without Gauntlet: scripts/h200-serve.sh --probe runs it on the GPU machine."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def post(base, path, body, timeout=120):
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def probe(cfg, extra, ready_limit):
    parts = cfg.split(":")
    attn, dtype, comp = parts[:3]
    fault = parts[3] if len(parts) > 3 else "none"
    port = free_port()
    log = open("/tmp/probe-%s.log" % cfg.replace(":", "-"), "w+")
    argv = [sys.executable, os.path.join(HERE, "hf_serve.py"), "--port", str(port), "--attn-implementation", attn,
            "--dtype", dtype, "--compile", comp, "--fault", fault] + extra
    t0 = time.time()
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    base = "http://127.0.0.1:%d" % port
    out = {"config": cfg}
    while time.time() - t0 < ready_limit and p.poll() is None:
        try:
            urllib.request.urlopen(base + "/health", timeout=2).read()
            out["ready_s"] = round(time.time() - t0, 2)
            break
        except Exception:
            time.sleep(0.2)
    try:
        if "ready_s" in out:
            t = time.time()
            c = json.loads(post(base, "/v1/completions", {"prompt": "The capital of France is", "max_tokens": 24,
                                                          "temperature": 0, "logprobs": 5}))
            out["first_answer_s"] = round(time.time() - t, 3)
            ch = c["choices"][0]
            out["text"] = ch["text"]
            out["logprobs"] = [round(x, 4) for x in ch["logprobs"]["token_logprobs"]]
            out["top1_gap"] = [round(sorted(d.values())[-1] - sorted(d.values())[-2], 3) for d in ch["logprobs"]["top_logprobs"]]
            s = post(base, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8,
                                                    "stream": True, "stream_options": {"include_usage": True}})
            out["chat_stream_events"] = s.count("data: ")
            res = []
            t = time.time()
            ths = [threading.Thread(target=lambda: res.append(post(base, "/v1/completions", {
                "prompt": "hello " * 128, "max_tokens": 64, "temperature": 0}))) for _ in range(8)]
            for th in ths:
                th.start()
            for th in ths:
                th.join()
            out["c8_wall_s"] = round(time.time() - t, 3)
            out["c8_tok_s"] = round(8 * 64 / (time.time() - t), 1)
    except Exception as e:
        out["error"] = "%s: %s" % (type(e).__name__, e)
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
    out["exit"] = p.returncode
    log.seek(0)
    out["log_tail"] = log.read()[-1500:]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    limit = float(os.environ.get("PROBE_READY_S", "120"))
    extra = os.environ.get("PROBE_ARGS", "").split()
    for cfg in sys.argv[1:]:
        probe(cfg, extra, limit)
