"""What a stage sees inside a trial's isolation (scripts/gpu-isolation.sh), and whether CUDA works there.

Prints one line of facts, then checks: not root, its own PID namespace (a small pid, few processes),
a /tmp of its own, and a CUDA matmul that agrees with the CPU in float64 within tolerance. Exits 0
when all hold; 1 with the failed check otherwise (a wrong result says wrong_output)."""
import glob
import os
import sys

procs = [p for p in os.listdir("/proc") if p.isdigit()]
facts = {"uid": os.getuid(), "pid": os.getpid(), "procs": len(procs), "tmp": sorted(os.listdir("/tmp"))[:10],
         "gpu_nodes": sorted(glob.glob("/dev/nvidia*")), "cuda_visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
try:
    open(f"/proc/{os.getppid()}/environ").read()
    facts["parent_environ"] = "readable"
except OSError as e:
    facts["parent_environ"] = type(e).__name__
print("iso-probe:", facts, flush=True)
failed = []
if facts["uid"] == 0:
    failed.append("runs as root")
if facts["pid"] > 10 or facts["procs"] > 10:
    failed.append("not in a PID namespace of its own")
if facts["tmp"]:
    failed.append("/tmp is not its own (it holds files already)")

import torch  # noqa: E402

g = torch.Generator().manual_seed(46)
a = torch.randn(257, 129, generator=g, dtype=torch.float64)
b = torch.randn(129, 511, generator=g, dtype=torch.float64)
ref = a @ b
got = (a.float().cuda() @ b.float().cuda()).double().cpu()
err = (got - ref).abs().max().item()
print(f"iso-probe: cuda {torch.cuda.get_device_name(0)} matmul max error {err:.3e}", flush=True)
if failed:
    print("iso-probe: failed:", "; ".join(failed))
    sys.exit(1)
if err > 1e-3:
    print(f"iso-probe: wrong_output: matmul differs from the CPU by {err:.3e}")
    sys.exit(1)
print("iso-probe: ok")
