# verdict: fail
# sample: resume_equivalence
# message: load_checkpoint returned
# why: returns the epoch to start from next (epoch + 1) instead of the epoch that was saved.
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig, FullOptimStateDictConfig


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=True),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=True)):
        model_state = model.state_dict()
        optim_state = FSDP.optim_state_dict(model, optimizer)
    if dist.get_rank() == 0:
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, path)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"]) + 1
