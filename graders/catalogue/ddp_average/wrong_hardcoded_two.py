# verdict: fail
# message: 1.5× the full-batch gradient
# message: divided by 2, but 3 processes ran
# message: dist.get_world_size()
# fails: matches_single_process_training
# why: divides by a hard-coded 2 (the world size the student tested with), not dist.get_world_size()
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= 2
