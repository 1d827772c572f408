# verdict: fail
# message: not averaged
# why: averages only the first parameter that has a gradient (a `return` inside the loop)
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
            return
