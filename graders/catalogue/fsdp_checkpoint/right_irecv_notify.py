# verdict: pass
# why: rank 0 writes, then tells every other rank the file is complete with a point-to-point message (isend; the others irecv(...).wait()) instead of a barrier (found by a red-team helper: it hung, the world counted neither call).
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
    rank, size = dist.get_rank(), dist.get_world_size()
    flag = torch.zeros(1)
    if rank == 0:
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, path)
        flag += 1
        works = [dist.isend(flag, dst=r) for r in range(1, size)]
        for w in works:
            w.wait()
    else:
        dist.irecv(flag, src=0).wait()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
