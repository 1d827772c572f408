# verdict: fail
# message: differs from the unsharded MLP
# why: the split swapped: treats the first layer as row-parallel (slices x's features), all-reduces the pre-activation and applies gelu after, so the hidden units no longer match the shards
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    W, r = comm.world_size, comm.rank
    xs = x.tensor_split(W, dim=-1)[r]
    ws = w1.tensor_split(W, dim=0)[r]
    pre = (xs @ ws).contiguous()
    comm.all_reduce(pre)
    y = F.gelu(pre + b1) @ w2
    return y + b2
