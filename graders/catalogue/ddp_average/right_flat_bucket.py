# verdict: pass
# why: one bucket, as DDP does: flatten every gradient into one buffer, a single all_reduce, divide, copy back
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()
