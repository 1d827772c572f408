# verdict: fail
# sample: optimizer_state
# message: no optimizer state
# message: optimizer state
# why: saves and loads the model only: a resumed Adam restarts from empty moments and step 0.
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig, FullOptimStateDictConfig


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=True)):
        model_state = model.state_dict()
    if dist.get_rank() == 0:
        torch.save({"model": model_state, "optim": {}, "epoch": epoch}, path)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
    return int(ckpt["epoch"])
