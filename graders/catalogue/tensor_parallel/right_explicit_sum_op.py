# verdict: pass
# why: passes op="sum" explicitly and builds the partial output in a buffer of x's dtype
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = torch.zeros(*x.shape[:-1], w2.shape[-1], dtype=x.dtype, device=x.device)
    y += F.gelu(x @ w1 + b1) @ w2
    if comm.world_size > 1:
        comm.all_reduce(y, op="sum")
    return y + b2
