# verdict: fail
# message: deadlock
# message: rank 0 has already returned
# why: rank 0 skips the all-gather (it "already has its shard"): the ranks' collective calls no longer match
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    world = comm.world_size
    n = tensor.numel()
    shard = -(-n // world)
    padded = torch.zeros(world * shard, dtype=tensor.dtype)
    padded[:n] = tensor.reshape(-1)
    mine = torch.empty(shard, dtype=tensor.dtype)
    comm.reduce_scatter_tensor(mine, padded)
    if comm.rank != 0:
        comm.all_gather_into_tensor(padded, mine)
    tensor.copy_(padded[:n].view_as(tensor))
