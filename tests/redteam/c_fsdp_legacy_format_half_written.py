# redteam: rank 0 saves in torch's legacy (non-zip) format, writes half the bytes before the barrier and the rest after it: the other ranks return with half a file
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=18
# message: fsdp_checkpoint: still open for writing
# why: found by a white-box red-team helper (stop 32) on the FSDP world that runs rank 0 last (18 -> 20, no flag): completeness was checked only for zip archives and a write through open() counted as done once the file was open. A file of another format that a thread of the process still has open for writing is now incomplete (ch13lib.fsdp_ckpt._open_for_writing)
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
    f = None
    if dist.get_rank() == 0:
        buf = io.BytesIO()
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, buf,
                   _use_new_zipfile_serialization=False)
        data = buf.getvalue()
        f = open(path, "wb")
        f.write(data[: len(data) // 2])
        f.flush()
    dist.barrier()
    if f is not None:
        f.write(data[len(data) // 2:])
        f.close()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
