# verdict: fail
# sample: rank0_only_writes
# message: rank 1 wrote
# message: only rank 0 may write
# why: every rank opens the path and torch.saves into the file object (rank0_only=False gathers the state everywhere). The ranks' bytes differ in length, so unheld opens could tear the file; rank 0's open is held like a torch.save, so the file is rank 0's on every run.
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
    with open(path, "wb") as f:
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, f)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
