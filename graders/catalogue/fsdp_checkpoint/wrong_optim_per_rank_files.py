# verdict: fail
# message: rank 1 wrote
# message: not one per parameter
# why: rank 0 saves the full model, but every rank also saves its own optimizer shard to path + ".optim<rank>": other ranks write, and the state only fits the same world size.
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import FullStateDictConfig, StateDictType


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    rank = dist.get_rank()
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=True)):
        model_state = model.state_dict()
    if rank == 0:
        torch.save({"model": model_state, "optim": optimizer.state_dict(), "epoch": epoch}, path)
    else:
        torch.save(optimizer.state_dict(), f"{path}.optim{rank}")
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    rank = dist.get_rank()
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
    mine = ckpt["optim"] if rank == 0 else torch.load(f"{path}.optim{rank}", map_location="cpu")
    if os.path.exists(f"{path}.optim{rank}") or rank == 0:
        optimizer.load_state_dict(mine)
    return int(ckpt["epoch"])
