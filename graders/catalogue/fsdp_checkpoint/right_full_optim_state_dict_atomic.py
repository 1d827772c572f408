# verdict: pass
# why: the older FSDP.full_optim_state_dict / scatter_full_optim_state_dict pair; rank 0 writes a temp file and renames it into place; completion is signalled with broadcast_object_list instead of a barrier.
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import FullStateDictConfig, StateDictType


def save_checkpoint(model, optimizer, epoch, path):
    cfg = FullStateDictConfig(offload_to_cpu=False, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        model_state = model.state_dict()
    optim_state = FSDP.full_optim_state_dict(model, optimizer, rank0_only=True)
    done = [False]
    if dist.get_rank() == 0:
        tmp = path + ".tmp"
        torch.save({"model": model_state, "optim": optim_state, "epoch": int(epoch)}, tmp)
        os.replace(tmp, path)
        done = [True]
    dist.broadcast_object_list(done, src=0)      # nobody leaves before rank 0 has renamed the file
    assert done[0]


def load_checkpoint(model, optimizer, path):
    ckpt = None
    if dist.get_rank() == 0:
        ckpt = torch.load(path, map_location="cpu")
    cfg = FullStateDictConfig(offload_to_cpu=False, rank0_only=False)
    box = [ckpt["model"] if ckpt is not None else None]
    dist.broadcast_object_list(box, src=0)       # only rank 0 reads the file; the rest receive it
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        model.load_state_dict(box[0])
    sharded = FSDP.scatter_full_optim_state_dict(ckpt["optim"] if ckpt is not None else None, model)
    optimizer.load_state_dict(sharded)
    box = [ckpt["epoch"] if ckpt is not None else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]
