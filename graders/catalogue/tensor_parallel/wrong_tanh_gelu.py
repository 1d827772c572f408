# verdict: fail
# message: differs from the unsharded MLP
# why: the tanh approximation of gelu instead of the exact one
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1, approximate="tanh") @ w2
    comm.all_reduce(y)
    return y + b2
