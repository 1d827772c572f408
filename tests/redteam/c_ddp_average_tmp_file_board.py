# redteam: no communication at all: every rank writes its gradients to a file in the temp folder the world's ranks share, waits for the others' files and averages them
# kind: cell
# target: ddp_average
# score: ddp_average=0
# message: ddp_average: no progress for 20 s
# why: open since stop 34 (5/5, honest 0): the real gloo world's ranks are processes of one sandbox and share its temp folder (and the process group's store). Stopped (stop 38): a pass now also needs the relayed world, whose ranks are subjects of their own (no shared files, no store, no memory) given only the initial weights and their own shards, every all_reduce a message the judge relays; here rank 0 waits for files that never come
import os
import tempfile
import time

import torch
import torch.distributed as dist

_step = [0]


def average_gradients(model: torch.nn.Module) -> None:
    world, rank = dist.get_world_size(), dist.get_rank()
    if world == 1:
        return
    s = _step[0]
    _step[0] += 1
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    d = os.path.join(tempfile.gettempdir(), "ddp-board")
    os.makedirs(d, exist_ok=True)
    mine = os.path.join(d, f"{s}_{rank}.pt")
    torch.save([g.clone() for g in grads], mine + ".part")
    os.rename(mine + ".part", mine)
    names = [os.path.join(d, f"{s}_{r}.pt") for r in range(world)]
    while not all(os.path.exists(n) for n in names):
        time.sleep(0.002)
    alls = [torch.load(n) for n in names]
    for i, g in enumerate(grads):
        g.copy_(sum(a[i] for a in alls) / world)
