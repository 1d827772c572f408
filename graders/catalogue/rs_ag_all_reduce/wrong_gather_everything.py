# verdict: fail
# sample: bandwidth
# message: not bandwidth-optimal
# why: all-gathers every rank's whole tensor and sums locally: right sums, but each rank sends (W-1)·n elements
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    w = comm.world_size
    flat = tensor.reshape(-1).contiguous()
    everyone = torch.empty(w * flat.numel(), dtype=flat.dtype)
    comm.all_gather_into_tensor(everyone, flat)
    tensor.copy_(everyone.view(w, -1).sum(0).view_as(tensor))
