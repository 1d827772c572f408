# verdict: pass
# why: the notebook's reference: column-parallel first layer, gelu on this rank's hidden units, row-parallel second layer, one all_reduce of the partial output, b2 added once after it
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    """集合操作: 用本 rank 的分片计算 y = gelu(x @ W1 + B1) @ W2 + b2; 每个 rank 都得到完整的 y。

    Collective: y = gelu(x @ W1 + B1) @ W2 + b2 from this rank's shards; the full y on every rank.
    """
    h = F.gelu(x @ w1 + b1)  # this rank's hidden units (a column block of W1)
    y = h @ w2  # their contribution to every output (a row block of W2)
    if comm.world_size > 1:
        comm.all_reduce(y)  # sum of the partial outputs, in place
    return y + b2  # the bias once, after the sum
