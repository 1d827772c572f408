# verdict: fail
# sample: frozen_parameters
# message: raised an exception
# fails: frozen_parameters
# why: assumes every parameter has a .grad: crashes on a frozen layer (requires_grad=False, .grad is None)
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    world = dist.get_world_size()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world
