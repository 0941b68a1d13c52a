#!/usr/bin/env python3
"""Checks tests/fixtures/openai_server.py in every mode (stdlib only; run by ctest, label unit).

usage: fixture_server_test.py PATH/TO/openai_server.py
"""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

SERVER = None


class Server:
    def __init__(self, mode, *extra):
        self.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--mode", mode, *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = None
        self.lines = []

    def wait_listening(self, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.search(r"Uvicorn running on http://[\d.]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                return self.port
        raise AssertionError("server did not print the Uvicorn line: %r" % self.lines)

    def request(self, method, path, body=None, timeout=10):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, data

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for s in (self.proc.stdout, self.proc.stderr):
            s.close()


def sse_events(raw):
    return [line[len("data: "):] for line in raw.decode().splitlines() if line.startswith("data: ")]


class LoadFailures(unittest.TestCase):
    def run_to_exit(self, mode):
        p = subprocess.run([sys.executable, SERVER, "--port", "0", "--mode", mode],
                           capture_output=True, text=True, timeout=20)
        self.assertNotIn("Uvicorn running", p.stdout)
        return p

    def test_crash_on_load(self):
        p = self.run_to_exit("crash_on_load")
        self.assertEqual(p.returncode, 1)
        self.assertIn("Traceback (most recent call last):", p.stderr)
        self.assertIn("KeyError: 'model.layers.0.self_attn.qkv_proj.weight_scale'", p.stderr)

    def test_refuse_arch(self):
        p = self.run_to_exit("refuse_arch")
        self.assertEqual(p.returncode, 1)
        self.assertIn("is only supported on SM100", p.stderr)

    def test_oom(self):
        p = self.run_to_exit("oom")
        self.assertEqual(p.returncode, 1)
        self.assertIn("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate", p.stderr)


class Serving(unittest.TestCase):
    def start(self, mode, *extra):
        s = Server(mode, *extra)
        self.addCleanup(s.stop)
        s.wait_listening()
        return s

    def test_healthy_smoke_models_and_usage(self):
        s = self.start("healthy", "--model", "org/test-model")
        self.assertEqual(s.request("GET", "/health")[0], 200)
        status, body = s.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["data"][0]["id"], "org/test-model")
        status, body = s.request("POST", "/v1/completions",
                                 {"model": "org/test-model", "prompt": "The capital of France is", "max_tokens": 16})
        self.assertEqual(status, 200)
        r = json.loads(body)
        self.assertIn("Paris", r["choices"][0]["text"])
        self.assertEqual(r["usage"]["prompt_tokens"], 5)
        self.assertEqual(r["usage"]["completion_tokens"], 10)
        status, body = s.request("POST", "/v1/completions", {"prompt": "hello world", "max_tokens": 7})
        r = json.loads(body)
        self.assertEqual(r["usage"]["completion_tokens"], 7)
        self.assertEqual(r["choices"][0]["finish_reason"], "length")
        self.assertEqual(s.request("POST", "/v1/nope", {})[0], 404)
        self.assertEqual(s.request("GET", "/nope")[0], 404)

    def test_streaming_completions_and_chat(self):
        s = self.start("healthy")
        status, raw = s.request("POST", "/v1/completions",
                                {"prompt": "bench prompt words", "max_tokens": 32, "stream": True,
                                 "stream_options": {"include_usage": True}})
        self.assertEqual(status, 200)
        events = sse_events(raw)
        self.assertEqual(events[-1], "[DONE]")
        chunks = [json.loads(e) for e in events[:-1]]
        texts = [c["choices"][0]["text"] for c in chunks if c["choices"] and c["choices"][0]["text"]]
        self.assertEqual(len(texts), 32)
        self.assertEqual(chunks[-1]["usage"]["completion_tokens"], 32)
        status, raw = s.request("POST", "/v1/chat/completions",
                                {"messages": [{"role": "user", "content": "The capital of France is"}],
                                 "max_tokens": 16, "stream": True})
        events = sse_events(raw)
        self.assertEqual(events[-1], "[DONE]")
        content = "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-1])
        self.assertIn("Paris", content)
        status, body = s.request("POST", "/v1/chat/completions",
                                 {"messages": [{"role": "user", "content": "The capital of France is"}],
                                  "logprobs": True})
        r = json.loads(body)
        self.assertIn("Paris", r["choices"][0]["message"]["content"])
        self.assertLess(r["choices"][0]["logprobs"]["content"][0]["logprob"], 0)

    def test_token_delay_paces_the_stream(self):
        s = self.start("healthy", "--token-delay", "0.02")
        t0 = time.time()
        s.request("POST", "/v1/completions", {"prompt": "x", "max_tokens": 10, "stream": True})
        self.assertGreaterEqual(time.time() - t0, 0.2)

    def test_garbage_and_empty_and_fffd(self):
        for mode, expect in (("garbage", "!!!!!!!!"), ("empty", ""), ("replacement_chars", " Paris\ufffd\ufffd\ufffd\ufffd")):
            s = self.start(mode)
            status, body = s.request("POST", "/v1/completions", {"prompt": "The capital of France is"})
            self.assertEqual(status, 200)
            self.assertEqual(json.loads(body)["choices"][0]["text"], expect, mode)

    def test_nan_logprobs_are_bare_nan(self):
        s = self.start("nan_logprobs")
        status, body = s.request("POST", "/v1/completions", {"prompt": "The capital of France is", "logprobs": 1})
        self.assertEqual(status, 200)
        self.assertIn(b"NaN", body)

    def test_never_ready(self):
        s = self.start("never_ready")
        for _ in range(3):
            self.assertEqual(s.request("GET", "/health")[0], 503)
            time.sleep(0.1)
        self.assertEqual(s.request("GET", "/v1/models")[0], 503)
        self.assertEqual(s.request("POST", "/v1/completions", {"prompt": "x"})[0], 503)

    def test_slow_ready(self):
        s = self.start("slow_ready", "--ready-delay", "1.0")
        self.assertEqual(s.request("GET", "/health")[0], 503)
        time.sleep(1.2)
        self.assertEqual(s.request("GET", "/health")[0], 200)

    def test_crash_on_request(self):
        s = self.start("crash_on_request")
        self.assertEqual(s.request("GET", "/health")[0], 200)
        with self.assertRaises((http.client.HTTPException, ConnectionError, OSError)):
            s.request("POST", "/v1/completions", {"prompt": "The capital of France is"})
        self.assertEqual(s.proc.wait(timeout=5), 1)
        err = s.proc.stderr.read()
        self.assertIn("CUDA error: an illegal memory access was encountered", err)

    def test_sigterm_exits_zero(self):
        s = self.start("healthy")
        s.proc.send_signal(signal.SIGTERM)
        self.assertEqual(s.proc.wait(timeout=5), 0)


if __name__ == "__main__":
    SERVER = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "fixtures", "openai_server.py")
    unittest.main(verbosity=1)
