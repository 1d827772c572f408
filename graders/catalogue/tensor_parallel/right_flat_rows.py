# verdict: pass
# why: flattens the leading dims to rows, torch.addmm for the first layer, reduces the flat (rows, d_out) output and restores x's leading shape
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    lead = x.shape[:-1]
    rows = x.reshape(-1, x.shape[-1])
    h = F.gelu(torch.addmm(b1, rows, w1), approximate="none")
    y = h.mm(w2)
    if comm.world_size != 1:
        comm.all_reduce(y)
    y += b2
    return y.reshape(*lead, w2.shape[1])
