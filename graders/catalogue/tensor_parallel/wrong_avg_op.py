# verdict: fail
# message: the partial products were averaged, not summed
# why: all_reduce with op AVG
import torch
import torch.distributed as dist
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1) @ w2
    comm.all_reduce(y, op=dist.ReduceOp.AVG)
    return y + b2
