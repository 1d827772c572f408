# verdict: fail
# message: raised an exception
# message: process group
# why: calls torch.distributed.all_reduce instead of building it from comm's point-to-point calls
import torch
import torch.distributed as dist


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
