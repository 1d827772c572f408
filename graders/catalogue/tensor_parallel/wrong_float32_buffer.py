# verdict: fail
# message: reduce in x's dtype (float64)
# why: accumulates the partial output in a float32 buffer (torch.zeros without dtype): the output is promoted back to float64 by + b2 and stays within allclose, but the all_reduce moves float32 and loses float64's precision
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = torch.zeros(*x.shape[:-1], w2.shape[1])
    y += F.gelu(x @ w1 + b1) @ w2
    comm.all_reduce(y)
    return y + b2
