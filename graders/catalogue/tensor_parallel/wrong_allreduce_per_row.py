# verdict: fail
# sample: one_all_reduce
# message: exactly one comm.all_reduce of y's size
# why: reduces the output row by row: the right numbers with one all_reduce per row
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1) @ w2
    flat = y.reshape(-1, y.shape[-1])
    for row in flat:
        comm.all_reduce(row)
    return y + b2
