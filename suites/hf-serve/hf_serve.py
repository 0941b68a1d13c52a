#!/usr/bin/env python3
"""hf-serve: an OpenAI-compatible server on PyTorch + Hugging Face transformers, for Gauntlet's
`server` stage (suites/hf-serve.json). Standard-library HTTP; no package beyond torch and
transformers.

    python3 hf_serve.py --port P [--attn-implementation eager|sdpa|flex_attention|flash_attention_2|...]
                        [--dtype fp32|bf16|fp16] [--compile off|on] [--size small|tiny]
                        [--device auto|cuda|cpu] [--fault none|layer] [--max-batch 64]
    python3 hf_serve.py --fingerprint        # prints the software versions as one JSON object

The model is a Llama-family decoder (transformers' LlamaForCausalLM) built from a config with fixed
seeds: no weights are downloaded. Its weights are drawn from one seeded generator in parameter-name
order, so every backend, dtype and compile setting serves the same function; the scale of the draw
(3/sqrt(hidden)) gives peaked next-token distributions, so that greedy answers are stable under
rounding and backends can be compared token by token. The rows of <bos> and <eos> in the output
layer are zero: the untrained model never ends an answer on its own (answers run to max_tokens).

The tokenizer is byte-level: one token per byte of the UTF-8 prompt, over printable ASCII, tab and
newline (97 tokens), plus <bos> (0) and <eos> (1); other bytes become '?'.

Endpoints: GET /health, GET /v1/models, POST /v1/completions and /v1/chat/completions, with
"stream" (Server-Sent Events, chunked), "max_tokens" (chat also "max_completion_tokens"),
"temperature" (0: greedy), "logprobs" (completions: top-k count; chat: true with "top_logprobs")
and "stream_options": {"include_usage": true}. Concurrent requests are batched: the engine thread
takes every request waiting (up to --max-batch), prefills them together (left-padded) and decodes
them step by step, streaming each token as it is chosen.

It fails the way real servers do: a backend transformers refuses (flash_attention_2 without the
flash_attn package, say) raises while the model is built, before the port is opened, and the
process exits with the framework's own traceback. --fault layer scales one decoder layer's MLP
output by 1.05: answers still look like the model's, but are not the same function any more
(what differential validation must catch).
"""

import argparse
import json
import math
import os
import queue
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHARS = "\n\t" + "".join(chr(c) for c in range(32, 127))
BOS, EOS = 0, 1
VOCAB = 2 + len(CHARS)
CHAR_ID = {c: i + 2 for i, c in enumerate(CHARS)}
TOKEN_TEXT = ["<bos>", "<eos>"] + list(CHARS)

SIZES = {
    # ~100M parameters: loads in a few seconds and decodes at a realistic rate on one GPU.
    "small": dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                  num_key_value_heads=4),
    # For CPU tests: answers in milliseconds.
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2),
}
DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
SEED = 1234


def encode(text):
    return [CHAR_ID.get(chr(b), CHAR_ID["?"]) for b in text.encode("utf-8")]


def decode(ids):
    return "".join(TOKEN_TEXT[i] for i in ids if i > EOS)


def chat_prompt(messages):
    # A plain-text template: the tokenizer has no special tokens for roles.
    out = []
    for m in messages if isinstance(messages, list) else []:
        content = m.get("content", "") if isinstance(m, dict) else ""
        if isinstance(content, list):  # [{"type": "text", "text": ...}]
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append("<|%s|>\n%s\n" % (m.get("role", "user") if isinstance(m, dict) else "user", content))
    return "".join(out) + "<|assistant|>\n"


def fingerprint():
    info = {"python": sys.version.split()[0]}
    try:
        import torch
        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda or "none"
        info["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    except Exception as e:  # a fingerprint reports what it finds
        info["torch"] = "missing (%s)" % type(e).__name__
    try:
        import transformers
        info["transformers"] = transformers.__version__
    except Exception as e:
        info["transformers"] = "missing (%s)" % type(e).__name__
    try:
        import flash_attn
        info["flash_attn"] = flash_attn.__version__
    except Exception:
        info["flash_attn"] = "not installed"
    return info


def log(msg):
    print("hf-serve: " + msg, flush=True)


# ---- the model -----------------------------------------------------------------------------------

def build_model(args, torch, device):
    from transformers import AutoModelForCausalLM, LlamaConfig

    size = SIZES[args.size]
    cfg = LlamaConfig(vocab_size=VOCAB, max_position_embeddings=4096, rms_norm_eps=1e-5, bos_token_id=BOS,
                      eos_token_id=EOS, pad_token_id=EOS, tie_word_embeddings=False, **size)
    torch.manual_seed(SEED)
    # The attention backend is chosen here, as a real server chooses it when it loads the model:
    # transformers checks it at construction and raises if it cannot serve it. Built on the device
    # itself: drawing 90M weights on a CPU took most of the load time.
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation=args.attn_implementation)
    std = 3.0 / math.sqrt(size["hidden_size"])
    # One seeded generator per device type: the same weights for every backend on one kind of
    # device (the reference and the configs it judges run on the same hardware class).
    gens = {}
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.dim() == 1:  # RMSNorm weights
                p.fill_(1.0)
                continue
            gen = gens.setdefault(p.device.type, torch.Generator(device=p.device).manual_seed(SEED))
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float32, device=p.device) * std)
        head = model.get_output_embeddings().weight
        head[BOS].zero_()
        head[EOS].zero_()
        if args.fault == "layer":
            layer = model.model.layers[len(model.model.layers) // 2]
            layer.mlp.down_proj.weight.mul_(1.05)
    model.eval()
    return model, cfg


def pick_device(args, torch):
    if args.device != "auto":
        return torch.device(args.device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Request:
    def __init__(self, ids, max_tokens, temperature, top_k):
        self.ids = ids
        self.max_tokens = max(1, int(max_tokens))
        self.temperature = float(temperature or 0)
        self.top_k = max(0, min(20, int(top_k or 0)))
        self.events = queue.Queue()  # (token id, logprob, [(token id, logprob)]) ... then None
        self.finish = "length"
        self.error = None


class Engine:
    """Runs batches on one thread: every request waiting when a batch starts joins it."""

    def __init__(self, model, torch, device, max_batch):
        self.model, self.torch, self.device, self.max_batch = model, torch, device, max_batch
        self.pending = queue.Queue()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def start(self):
        self.thread.start()

    def submit(self, req):
        self.pending.put(req)
        return req

    def loop(self):
        while True:
            batch = [self.pending.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self.pending.get_nowait())
                except queue.Empty:
                    break
            try:
                self.run(batch)
            except Exception as e:  # a failing step fails its requests; the traceback goes to the log
                import traceback
                traceback.print_exc()
                sys.stderr.flush()
                for r in batch:
                    r.error = "%s: %s" % (type(e).__name__, e)
                    r.events.put(None)
                if "CUDA" in str(e) or "cuda" in type(e).__name__.lower():
                    os._exit(1)  # a broken CUDA context serves nothing more, as in real servers

    def forward(self, ids, mask, pos, cache):
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, past_key_values=cache, use_cache=True)
        return out.logits[:, -1, :].float(), out.past_key_values

    def run(self, batch):
        torch = self.torch
        with torch.inference_mode():
            width = max(len(r.ids) for r in batch)
            ids = torch.full((len(batch), width), EOS, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for i, r in enumerate(batch):
                ids[i, width - len(r.ids):] = torch.tensor(r.ids)
                mask[i, width - len(r.ids):] = 1
            ids, mask = ids.to(self.device), mask.to(self.device)
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            logits, cache = self.forward(ids, mask, pos, None)
            k = max(r.top_k for r in batch)
            steps = max(r.max_tokens for r in batch)
            done = [False] * len(batch)
            for step in range(steps):
                logp = torch.log_softmax(logits, dim=-1)
                nxt = logits.argmax(dim=-1)
                hot = [i for i, r in enumerate(batch) if r.temperature > 0 and not done[i]]
                if hot:
                    temps = torch.tensor([batch[i].temperature for i in hot], device=logits.device)
                    probs = torch.softmax(logits[hot] / temps[:, None], dim=-1)
                    nxt[hot] = torch.multinomial(probs, 1).squeeze(-1)
                chosen = nxt.tolist()
                lps = logp.gather(1, nxt[:, None]).squeeze(-1).tolist()
                tops = None
                if k:
                    tv, ti = logp.topk(k, dim=-1)
                    tops = (tv.tolist(), ti.tolist())
                for i, r in enumerate(batch):
                    if done[i]:
                        continue
                    top = list(zip(tops[1][i][:r.top_k], tops[0][i][:r.top_k])) if tops and r.top_k else []
                    r.events.put((chosen[i], lps[i], top))
                    if chosen[i] == EOS:
                        r.finish, done[i] = "stop", True
                    elif step + 1 >= r.max_tokens:
                        done[i] = True
                    if done[i]:
                        r.events.put(None)
                if all(done):
                    return
                mask = torch.cat([mask, torch.ones((len(batch), 1), dtype=mask.dtype, device=mask.device)], dim=1)
                pos = pos[:, -1:] + 1
                logits, cache = self.forward(nxt[:, None], mask, pos, cache)


def warm_up(engine, log_each=True):
    """Runs the shapes serving will meet (one request; two of different lengths) before the port
    opens, so compilation and kernel selection happen while loading, as real servers do."""
    t0 = time.time()
    for prompts in (["warm up"], ["warm up, longer prompt", "short"]):
        reqs = [Request([BOS] + encode(p), 4, 0, 2) for p in prompts]
        engine.run(reqs)
        for r in reqs:
            while r.events.get() is not None:
                pass
    if log_each:
        log("warm-up done in %.2f s" % (time.time() - t0))


# ---- HTTP --------------------------------------------------------------------------------------

class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_handler(engine, model_name):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):  # one line per request would drown the trial log
            pass

        def send_json(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def error(self, code, msg, param=None):
            self.send_json(code, {"error": {"message": msg, "type": "invalid_request_error", "param": param}})

        def do_GET(self):
            if self.path == "/health":
                self.send_json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.send_json(200, {"object": "list", "data": [
                    {"id": model_name, "object": "model", "created": int(START), "owned_by": "gauntlet"}]})
            else:
                self.error(404, "no route " + self.path)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length > 16 << 20:
                self.error(413, "request body too large")
                return
            raw = self.rfile.read(length)
            try:
                req = json.loads(raw or b"{}")
            except ValueError:
                self.error(400, "body is not JSON")
                return
            if not isinstance(req, dict):
                self.error(400, "body is a JSON object")
                return
            if self.path == "/v1/completions":
                prompt = req.get("prompt", "")
                if isinstance(prompt, list):
                    prompt = prompt[0] if prompt and isinstance(prompt[0], str) else ""
                if not isinstance(prompt, str):
                    self.error(400, "prompt is a string", "prompt")
                    return
                lp = req.get("logprobs")
                top_k = int(lp) if isinstance(lp, int) and not isinstance(lp, bool) else 0
                self.complete(False, prompt, req, top_k, lp is not None and lp is not False)
            elif self.path == "/v1/chat/completions":
                want = bool(req.get("logprobs"))
                top_k = int(req.get("top_logprobs") or 0) if want else 0
                self.complete(True, chat_prompt(req.get("messages")), req, top_k, want)
            else:
                self.error(404, "no route " + self.path)

        def complete(self, chat, prompt, req, top_k, want_logprobs):
            max_tokens = req.get("max_completion_tokens") if chat else None
            max_tokens = max_tokens or req.get("max_tokens") or 16
            try:
                max_tokens, temperature = int(max_tokens), float(req.get("temperature") or 0)
            except (TypeError, ValueError):
                self.error(400, "max_tokens and temperature are numbers")
                return
            ids = [BOS] + encode(prompt)
            if len(ids) + max_tokens > 4096:
                self.error(400, "prompt and max_tokens exceed the 4096-token context", "max_tokens")
                return
            r = engine.submit(Request(ids, max_tokens, temperature, max(top_k, 1) if want_logprobs else 0))
            rid = "cmpl-%d" % id(r)
            created = int(time.time())
            obj = "chat.completion" if chat else "text_completion"
            if req.get("stream"):
                usage = bool((req.get("stream_options") or {}).get("include_usage"))
                self.stream(chat, r, rid, created, obj, want_logprobs, top_k, usage, len(ids))
                return
            toks = []
            while True:
                ev = r.events.get()
                if ev is None:
                    break
                toks.append(ev)
            if r.error:
                self.send_json(500, {"error": {"message": r.error, "type": "internal_error"}})
                return
            text = "".join(TOKEN_TEXT[t] for t, _, _ in toks if t > EOS)
            usage = {"prompt_tokens": len(ids), "completion_tokens": len(toks), "total_tokens": len(ids) + len(toks)}
            choice = {"index": 0, "finish_reason": r.finish,
                      "logprobs": logprobs_json(chat, toks, top_k) if want_logprobs else None}
            if chat:
                choice["message"] = {"role": "assistant", "content": text}
            else:
                choice["text"] = text
            self.send_json(200, {"id": rid, "object": obj, "created": created, "model": model_name,
                                 "choices": [choice], "usage": usage})

        def chunk(self, obj):
            payload = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()

        def stream(self, chat, r, rid, created, obj, want_logprobs, top_k, usage, n_prompt):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            kind = obj + ".chunk" if chat else obj
            n = 0
            try:
                if chat:
                    self.chunk({"id": rid, "object": kind, "created": created, "model": model_name,
                                "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                             "finish_reason": None}]})
                while True:
                    ev = r.events.get()
                    if ev is None:
                        break
                    n += 1
                    piece = TOKEN_TEXT[ev[0]] if ev[0] > EOS else ""
                    choice = {"index": 0, "finish_reason": None,
                              "logprobs": logprobs_json(chat, [ev], top_k) if want_logprobs else None}
                    if chat:
                        choice["delta"] = {"content": piece}
                    else:
                        choice["text"] = piece
                    self.chunk({"id": rid, "object": kind, "created": created, "model": model_name, "choices": [choice]})
                if r.error:
                    self.chunk({"error": {"message": r.error, "type": "internal_error"}})
                else:
                    last = {"index": 0, "finish_reason": r.finish}
                    if chat:
                        last["delta"] = {}
                    else:
                        last["text"] = ""
                    self.chunk({"id": rid, "object": kind, "created": created, "model": model_name, "choices": [last]})
                    if usage:
                        self.chunk({"id": rid, "object": kind, "created": created, "model": model_name, "choices": [],
                                    "usage": {"prompt_tokens": n_prompt, "completion_tokens": n,
                                              "total_tokens": n_prompt + n}})
                self.chunk(b"[DONE]")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def logprobs_json(chat, toks, top_k):
    if chat:
        return {"content": [{"token": TOKEN_TEXT[t], "logprob": lp, "bytes": list(TOKEN_TEXT[t].encode()),
                             "top_logprobs": [{"token": TOKEN_TEXT[a], "logprob": b, "bytes": list(TOKEN_TEXT[a].encode())}
                                              for a, b in top[:top_k]]} for t, lp, top in toks]}
    text_offset, at = [], 0
    for t, _, _ in toks:
        text_offset.append(at)
        at += len(TOKEN_TEXT[t]) if t > EOS else 0
    return {"tokens": [TOKEN_TEXT[t] for t, _, _ in toks], "token_logprobs": [lp for _, lp, _ in toks],
            "top_logprobs": [{TOKEN_TEXT[a]: b for a, b in top[:top_k]} for _, _, top in toks],
            "text_offset": text_offset}


START = time.time()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--attn-implementation", default="sdpa")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    ap.add_argument("--compile", choices=["off", "on"], default="off")
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--device", default="auto", help="auto (cuda when there is one), cuda or cpu")
    ap.add_argument("--fault", choices=["none", "layer"], default="none")
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--model-name", default=None)
    ap.add_argument("--fingerprint", action="store_true", help="print software versions as JSON and exit")
    args = ap.parse_args()
    if args.fingerprint:
        print(json.dumps(fingerprint()), flush=True)
        return 0

    t0 = time.time()
    import torch  # a missing torch is a traceback, as in any server that needs it

    # Numbers compared against an fp32 reference must be fp32: no TF32 in matmuls.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = pick_device(args, torch)
    log("loading llama-%s (attn_implementation=%s, dtype=%s, compile=%s, fault=%s) on %s" %
        (args.size, args.attn_implementation, args.dtype, args.compile, args.fault, device))
    model, cfg = build_model(args, torch, device)
    model = model.to(device=device, dtype=getattr(torch, DTYPES[args.dtype]))
    n_params = sum(p.numel() for p in model.parameters())
    log("model built: %.1fM parameters in %.2f s" % (n_params / 1e6, time.time() - t0))
    if args.compile == "on":
        model = torch.compile(model, dynamic=True)
    engine = Engine(model, torch, device, args.max_batch)
    warm_up(engine)
    engine.start()

    name = args.model_name or "gauntlet/llama-%s-%s-%s%s" % (args.size, args.attn_implementation, args.dtype,
                                                              "-compiled" if args.compile == "on" else "")
    httpd = Server((args.host, args.port), make_handler(engine, name))

    def stop(signum, frame):
        log("shutting down")
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log("ready in %.2f s: serving %s on http://%s:%d" % (time.time() - t0, name, args.host, args.port))
    httpd.serve_forever()
    httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
