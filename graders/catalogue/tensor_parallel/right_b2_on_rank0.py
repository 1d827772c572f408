# verdict: pass
# why: b2 added before the reduction on rank 0 only (it then counts once in the sum); the reduce happens at every world size, also W = 1
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    partial = F.gelu(torch.matmul(x, w1) + b1) @ w2
    if comm.rank == 0:
        partial = partial + b2
    comm.all_reduce(partial)
    return partial
