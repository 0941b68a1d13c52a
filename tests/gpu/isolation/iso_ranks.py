"""Two ranks on one GPU inside a trial's isolation (scripts/gpu-isolation.sh): each multiplies its own
seeded matrices on the GPU, the ranks all-reduce the products through gloo (torch.distributed, env://
rendezvous on the loopback the worker set up), and each checks the sum against the CPU in float64.
Exits 0 when the sum agrees; 1 with wrong_output otherwise."""
import os
import sys

import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)


def product(seed):
    g = torch.Generator().manual_seed(1000 + seed)
    a = torch.randn(193, 97, generator=g, dtype=torch.float64)
    b = torch.randn(97, 131, generator=g, dtype=torch.float64)
    return a, b


a, b = product(rank)
mine = (a.float().cuda() @ b.float().cuda()).double().cpu()
dist.all_reduce(mine, op=dist.ReduceOp.SUM)
ref = sum(x @ y for x, y in (product(r) for r in range(world)))
err = (mine - ref).abs().max().item()
print(f"iso-ranks: rank {rank} of {world} pid {os.getpid()} uid {os.getuid()} tmp {sorted(os.listdir('/tmp'))[:5]} "
      f"all-reduce max error {err:.3e}", flush=True)
dist.destroy_process_group()
if err > 1e-3:
    print(f"iso-ranks: wrong_output: the all-reduced sum differs from the CPU by {err:.3e}")
    sys.exit(1)
