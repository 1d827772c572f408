# verdict: fail
# message: 3× the full-batch gradient
# message: dist.get_world_size()
# fails: matches_single_process_training
# why: all_reduce sums; forgets to divide by the world size
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
