# verdict: fail
# message: not averaged
# why: reduces a copy (p.grad.clone()) and throws it away: the gradients are never averaged
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    for p in model.parameters():
        if p.grad is not None:
            g = p.grad.clone()
            dist.all_reduce(g)
            g /= dist.get_world_size()
