# verdict: fail
# message: not averaged
# why: only rank 0 calls all_reduce ("the main process does the syncing"): the collective is never matched, the other ranks keep their own gradients
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    if dist.get_rank() != 0:
        return
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
