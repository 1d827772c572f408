# verdict: pass
# why: the reference in a cell that seeds torch first, a common notebook habit: torch.manual_seed queues CUDA's seeding with traceback.format_stack(), whose frame read the audit hook once took for the cell's own (red team: 0 and flagged)
import torch
import torch.distributed as dist

torch.manual_seed(0)


def average_gradients(model: torch.nn.Module) -> None:
    world = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world
