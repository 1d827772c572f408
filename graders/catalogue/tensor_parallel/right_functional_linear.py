# verdict: pass
# why: F.linear with transposed shards, the partial output made contiguous before the in-place all_reduce, bias added with add_
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    hidden = F.gelu(F.linear(x, w1.t(), b1))
    out = F.linear(hidden, w2.t()).contiguous()
    if comm.world_size > 1:
        comm.all_reduce(out)
    return out.add_(b2)
