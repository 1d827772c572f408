# verdict: fail
# message: must hold exactly world_size
# why: the shard is n // W elements but the padded input has W·⌈n/W⌉: sizes disagree whenever n is uneven
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    world = comm.world_size
    n = tensor.numel()
    padded = torch.zeros(world * -(-n // world), dtype=tensor.dtype)
    padded[:n] = tensor.reshape(-1)
    mine = torch.empty(max(n // world, 1), dtype=tensor.dtype)
    comm.reduce_scatter_tensor(mine, padded)
    out = torch.empty(world * mine.numel(), dtype=tensor.dtype)
    comm.all_gather_into_tensor(out, mine)
    tensor.copy_(out[:n].view_as(tensor))
