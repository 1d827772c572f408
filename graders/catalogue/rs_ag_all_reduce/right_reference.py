# verdict: pass
# why: the notebook's reference: flatten, zero-pad to W·⌈n/W⌉, reduce-scatter into a shard, all-gather, copy the first n back in place
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    world = comm.world_size
    n = tensor.numel()
    shard = -(-n // world)                       # ⌈n / W⌉
    padded = torch.zeros(world * shard, dtype=tensor.dtype, device=tensor.device)
    padded[:n] = tensor.reshape(-1)
    mine = torch.empty(shard, dtype=tensor.dtype, device=tensor.device)
    comm.reduce_scatter_tensor(mine, padded)     # mine = sum over ranks of block `rank`
    comm.all_gather_into_tensor(padded, mine)    # every rank gets every summed block
    tensor.copy_(padded[:n].view_as(tensor))
