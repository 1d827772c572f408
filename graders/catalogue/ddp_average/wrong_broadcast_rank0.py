# verdict: fail
# message: not averaged
# why: broadcasts rank 0's gradient to everyone (Broadcast, not AllReduce): the replicas agree, but on rank 0's shard only
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    for p in model.parameters():
        if p.grad is not None:
            dist.broadcast(p.grad, src=0)
