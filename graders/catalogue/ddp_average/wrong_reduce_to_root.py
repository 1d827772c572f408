# verdict: fail
# message: rank 1
# message: differs from the full-batch gradient
# why: dist.reduce to rank 0: only rank 0 gets the mean, the other ranks step with their own gradient and drift apart
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    for p in model.parameters():
        if p.grad is not None:
            dist.reduce(p.grad, dst=0)
            if dist.get_rank() == 0:
                p.grad /= dist.get_world_size()
