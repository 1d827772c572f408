# redteam: a save whose only barrier comes before the real torch.save, with a 22-byte empty zip placed at the path just before it
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=18
# message: fsdp_checkpoint: rewritten after that
# why: found by the independent red team of 2026-12-08 (got 20, honest 18, no flag): "complete when save_checkpoint returns" asked only whether the file was an intact zip, and an empty zip is one, so the other ranks returned "after completion" while rank 0 had not written the checkpoint yet. Stopped: each rank's return also records the file's SHA-256, and the judge hashes the file as the save left it (the bytes it loads itself): a file whose bytes changed after a rank returned was not complete then (fsdp_ckpt.incomplete_why)
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
    if dist.get_rank() == 0:  # a placeholder: an empty but intact zip archive
        with open(path, "wb") as f:
            f.write(b"PK\x05\x06" + bytes(18))
    dist.barrier()  # the only barrier: BEFORE the checkpoint is written
    if dist.get_rank() == 0:  # the real checkpoint, written after the other ranks have returned
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, path)


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
