# verdict: fail
# sample: matches_unsharded_mlp
# message: mat1 must be a matrix
# why: x handled with at most two leading dimensions (flatten(0, 1) for a 3-D x), where the contract's x is (..., d_in): a 4-D x reaches addmm and raises. No case had more than two leading dimensions (8/8 before, a wrong-answer helper); the grid and the hypothesis cases now go to three
import torch
import torch.nn.functional as F


def _rows(x):
    """x as the 2-D (rows, d_in) matrix addmm wants."""
    if x.dim() == 1:
        return x.unsqueeze(0)
    if x.dim() == 3:  # (batch, seq, d_in)
        return x.flatten(0, 1)
    return x


def tp_mlp(x, w1, b1, w2, b2, comm):
    """Column-parallel W1, row-parallel W2, one all_reduce of the partial output, b2 once after it."""
    h = F.gelu(torch.addmm(b1, _rows(x), w1))
    y = h @ w2
    if comm.world_size > 1:
        comm.all_reduce(y)
    y = y + b2
    return y.reshape(*x.shape[:-1], w2.shape[1])
