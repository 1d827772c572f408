# verdict: fail
# sample: sums_on_simulator
# message: the average
# why: divides the shard by the world size between the two halves: an average, not a sum
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    world = comm.world_size
    n = tensor.numel()
    shard = -(-n // world)
    padded = torch.zeros(world * shard, dtype=tensor.dtype)
    padded[:n] = tensor.reshape(-1)
    mine = torch.empty(shard, dtype=tensor.dtype)
    comm.reduce_scatter_tensor(mine, padded)
    if mine.is_floating_point():
        mine /= world
    comm.all_gather_into_tensor(padded, mine)
    tensor.copy_(padded[:n].view_as(tensor))
