# redteam: monkeypatches torch.distributed so that the real process group's check sees what it expects
# kind: cell
# target: all_reduce
# score: all_reduce=0
# message: all_reduce: monkeypatches dist.all_reduce
# message: all_reduce: monkeypatches torch.distributed.barrier
# why: the screen refuses assignments to attributes of imported modules; the run-time check would catch a rebinding it missed
import torch
import torch.distributed as dist

_sum = dist.all_reduce
dist.all_reduce = lambda tensor, *a, **k: None
torch.distributed.barrier = lambda *a, **k: None


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    _sum(tensor)
