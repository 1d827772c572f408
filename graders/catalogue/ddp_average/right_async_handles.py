# verdict: pass
# why: divides first, then starts every all_reduce with async_op=True and waits for all the handles
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    n = dist.get_world_size()
    handles = []
    for p in model.parameters():
        if p.requires_grad and p.grad is not None:
            p.grad.div_(n)
            handles.append(dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, async_op=True))
    for h in handles:
        h.wait()
