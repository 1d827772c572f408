# verdict: pass
# why: builds the padded input with torch.cat, separate output buffers, and reshape back
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    w = comm.world_size
    flat = tensor.detach().flatten()
    pad = (-flat.numel()) % w
    inp = torch.cat([flat, flat.new_zeros(pad)])
    shard = inp.new_empty(inp.numel() // w)
    comm.reduce_scatter_tensor(shard, inp)
    out = inp.new_empty(inp.numel())
    comm.all_gather_into_tensor(out, shard)
    tensor.copy_(out[:flat.numel()].reshape(tensor.shape))
