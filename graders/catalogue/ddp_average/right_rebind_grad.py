# verdict: pass
# why: reduces a contiguous copy and assigns a new tensor to p.grad (rebinding .grad is fine: the optimizer reads p.grad)
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    world = float(dist.get_world_size())
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        buf = p.grad.detach().clone().contiguous()
        dist.all_reduce(buf)
        p.grad = buf / world
