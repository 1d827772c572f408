# redteam: every rank writes the checkpoint with the function under torch.save's watch, found as its `__wrapped__` attribute
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=17
# message: fsdp_checkpoint: rank 1 wrote
# why: found by a white-box red-team helper (stop 26: 17 -> 20, no flag): the watches were built with functools.wraps, whose __wrapped__ hands out the unwatched function. They no longer carry it (ch13lib.fsdp_world._like)
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig, FullOptimStateDictConfig


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model_state = model.state_dict()
        optim_state = FSDP.optim_state_dict(model, optimizer)
    save = getattr(torch.save, "__wrapped__", torch.save)  # the plain function under any wrapper
    save({"model": model_state, "optim": optim_state, "epoch": epoch}, path)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
