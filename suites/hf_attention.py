#!/usr/bin/env python3
"""One hf-attention trial: a Llama-family decoder from transformers (built from a config with fixed
seeds, nothing downloaded) run forward once on a 1024-token batch with one attention
implementation, checked against the same model in float32 with eager attention.

transformers does not refuse every combination it cannot serve: with attn_implementation="sdpa"
and output_attentions=True, SDPA cannot return attention weights, and transformers computes the
layer another way (eager) with at most a warning. The forward still answers, and right; only the
kernel record (the suite's `dispatch` expectation) shows that no fused attention kernel ran.

Exit codes (also the verdict in GAUNTLET_RESULT_FILE): 0 passed, 4 wrong_output, 5 no GPU.
"""
import argparse
import json
import os
import sys
import warnings

TOLERANCE = {"bf16": 3e-2, "fp16": 5e-3, "fp32": 1e-4}


def write_result(verdict, metrics, detail):
    path = os.environ.get("GAUNTLET_RESULT_FILE")
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({"verdict": verdict, "metrics": metrics, "detail": detail}, f)
        os.replace(path + ".tmp", path)


def build(attn, dtype, torch):
    from transformers import AutoModel, LlamaConfig
    cfg = LlamaConfig(vocab_size=1000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                      num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=2048)
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg, attn_implementation=attn)
    return model.to(device="cuda", dtype=dtype).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fingerprint", action="store_true")
    ap.add_argument("--attn", default="sdpa")
    ap.add_argument("--dtype", choices=sorted(TOLERANCE), default="bf16")
    ap.add_argument("--output-attentions", choices=["off", "on"], default="off")
    args = ap.parse_args()
    import torch
    if args.fingerprint:
        import transformers
        print(json.dumps({"torch": torch.__version__, "transformers": transformers.__version__,
                          "cuda": torch.version.cuda}))
        return 0
    if not torch.cuda.is_available():
        write_result("infra_error", {}, "no GPU")
        print("hf_attention: no GPU", file=sys.stderr)
        return 5
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 1000, (2, 1024), generator=g).cuda()
    want = args.output_attentions == "on"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.inference_mode():
            model = build(args.attn, dtype, torch)
            out = model(input_ids=ids, output_attentions=want).last_hidden_state.float()
            torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(5):
                model(input_ids=ids, output_attentions=want)
            stop.record()
            stop.synchronize()
            ms = start.elapsed_time(stop) / 5
            del model
            ref_model = build("eager", torch.float32, torch)
            ref = ref_model(input_ids=ids).last_hidden_state
    for w in caught:
        print("warning: %s" % str(w.message).strip().replace("\n", " "), file=sys.stderr)
    rel = float(torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref))
    metrics = {"ms": {"value": ms, "unit": "ms"}, "rel_err": {"value": rel, "unit": ""}}
    record = {"attn": args.attn, "dtype": args.dtype, "output_attentions": want, "rel_err": rel, "ms": ms,
              "torch": torch.__version__}
    if not torch.isfinite(out).all() or rel > TOLERANCE[args.dtype]:
        detail = "rel_err %.3g > tolerance %g" % (rel, TOLERANCE[args.dtype])
        write_result("wrong_output", metrics, detail)
        print(json.dumps(record))
        print("hf_attention: over tolerance: " + detail, file=sys.stderr)
        return 4
    write_result("passed", metrics, "")
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
