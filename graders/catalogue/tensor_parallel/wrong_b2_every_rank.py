# verdict: fail
# message: every rank added b2 before the all_reduce
# why: b2 added on every rank before the reduction: the sum holds it W times
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1) @ w2 + b2
    comm.all_reduce(y)
    return y
