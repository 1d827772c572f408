# verdict: fail
# message: is wrong after the call
# why: all-gather first, then reduce-scatter of the gathered blocks: the pieces land in the wrong places
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    world = comm.world_size
    n = tensor.numel()
    shard = -(-n // world)
    padded = torch.zeros(world * shard, dtype=tensor.dtype)
    padded[:n] = tensor.reshape(-1)
    gathered = torch.empty(world * world * shard, dtype=tensor.dtype)
    comm.all_gather_into_tensor(gathered, padded)
    out = torch.empty(world * shard, dtype=tensor.dtype)
    comm.reduce_scatter_tensor(out, gathered)
    tensor.copy_(out[:n].view_as(tensor))
