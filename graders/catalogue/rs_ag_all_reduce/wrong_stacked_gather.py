# verdict: fail
# message: concatenated along dim 0
# why: all-gathers into a stacked (W, c) output: NCCL accepts that, gloo only the concatenated (W·c,) form
import torch
import torch.nn.functional as F


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    W = comm.world_size
    n = tensor.numel()
    c = (n + W - 1) // W
    x = F.pad(tensor.reshape(-1), (0, W * c - n))
    piece = torch.zeros(c, dtype=x.dtype, device=x.device)
    comm.reduce_scatter_tensor(piece, x.contiguous())
    gathered = torch.zeros(W, c, dtype=x.dtype, device=x.device)
    comm.all_gather_into_tensor(gathered, piece)
    tensor.view(-1).copy_(gathered.reshape(-1)[:n])
