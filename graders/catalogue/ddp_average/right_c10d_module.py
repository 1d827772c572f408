# verdict: pass
# why: the functions of torch.distributed.distributed_c10d, which torch.distributed re-exports: the same calls under their module's own name (the relayed world relays both spellings)
import torch
from torch.distributed import distributed_c10d as c10d


def average_gradients(model: torch.nn.Module) -> None:
    n = c10d.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            c10d.all_reduce(p.grad)
            p.grad /= n
