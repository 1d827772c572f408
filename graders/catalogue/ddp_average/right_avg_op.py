# verdict: pass
# why: ReduceOp.AVG in one call (NCCL has it, and gloo in torch 2.13 too); skips missing grads
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
