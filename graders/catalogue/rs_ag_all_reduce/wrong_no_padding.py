# verdict: fail
# message: pad the tensor
# why: no padding: reduce_scatter_tensor needs exactly world_size equal blocks, so n not divisible by W breaks
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    w = comm.world_size
    flat = tensor.reshape(-1).clone()
    shard = torch.empty(flat.numel() // w, dtype=flat.dtype)
    comm.reduce_scatter_tensor(shard, flat)
    comm.all_gather_into_tensor(flat, shard)
    tensor.copy_(flat.view_as(tensor))
