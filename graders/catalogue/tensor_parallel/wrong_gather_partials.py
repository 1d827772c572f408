# verdict: fail
# message: gathering activations is not needed
# why: all-gathers every rank's partial output and sums them locally: right numbers, W times the traffic of one all_reduce and not the contract's communication
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = (F.gelu(x @ w1 + b1) @ w2).reshape(-1)
    everyone = torch.empty(comm.world_size * y.numel(), dtype=y.dtype)
    comm.all_gather_into_tensor(everyone, y)
    total = everyone.reshape(comm.world_size, -1).sum(0)
    return total.reshape(*x.shape[:-1], -1) + b2
