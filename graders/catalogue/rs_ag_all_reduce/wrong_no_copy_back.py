# verdict: fail
# message: in place
# why: computes the sum in a padded buffer and never copies it back into `tensor`
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    world = comm.world_size
    n = tensor.numel()
    shard = -(-n // world)
    padded = torch.zeros(world * shard, dtype=tensor.dtype)
    padded[:n] = tensor.reshape(-1)
    mine = torch.empty(shard, dtype=tensor.dtype)
    comm.reduce_scatter_tensor(mine, padded)
    comm.all_gather_into_tensor(padded, mine)
    tensor = padded[:n].view_as(tensor)
