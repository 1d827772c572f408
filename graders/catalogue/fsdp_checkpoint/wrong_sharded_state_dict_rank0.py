# verdict: fail
# message: sharded
# why: takes a SHARDED_STATE_DICT (every rank) and lets rank 0 save it: the file holds only rank 0's shards.
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig, FullOptimStateDictConfig
from torch.distributed.fsdp import ShardedStateDictConfig, ShardedOptimStateDictConfig


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT,
                              ShardedStateDictConfig(), ShardedOptimStateDictConfig()):
        model_state = model.state_dict()
        optim_state = FSDP.optim_state_dict(model, optimizer)
    if dist.get_rank() == 0:
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, path)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT,
                              ShardedStateDictConfig(), ShardedOptimStateDictConfig()):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
