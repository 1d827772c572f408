# verdict: fail
# message: returned on rank 1
# message: barrier
# why: rank 0 serialises into memory and writes the bytes with open(), and nobody waits for it: the other ranks return before the file is complete (rank 0's open is held like a torch.save, so this fails on every run).
import io

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
        buf = io.BytesIO()
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, buf)
        with open(path, "wb") as f:
            f.write(buf.getvalue())


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
