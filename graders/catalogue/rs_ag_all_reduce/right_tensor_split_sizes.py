# verdict: pass
# why: pads only when needed (skips the copy when n divides evenly) and writes back through tensor.view(-1)
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    W = comm.world_size
    flat = tensor.view(-1)
    n = flat.numel()
    if n % W == 0:
        src = flat.clone()
    else:
        src = torch.zeros(n + W - n % W, dtype=flat.dtype, device=flat.device)
        src[:n] = flat
    c = src.numel() // W
    shard = torch.empty(c, dtype=src.dtype, device=src.device)
    comm.reduce_scatter_tensor(shard, src)
    comm.all_gather_into_tensor(src, shard)
    flat.copy_(src[:n])
