# verdict: pass
# why: the notebook's reference: all_reduce(SUM) each gradient in place, then divide by the world size
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    world = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world
