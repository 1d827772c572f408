# verdict: fail
# message: the partial products were averaged, not summed
# why: divides the all-reduced partial outputs by the world size (a mean, as for DDP gradients)
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1) @ w2
    comm.all_reduce(y)
    y /= comm.world_size
    return y + b2
