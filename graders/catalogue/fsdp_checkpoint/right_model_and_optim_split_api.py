# verdict: pass
# why: get_model_state_dict / get_optimizer_state_dict and set_model_state_dict / set_optimizer_state_dict, epoch kept as a tensor-free int, barrier after the write.
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions, get_model_state_dict, get_optimizer_state_dict,
    set_model_state_dict, set_optimizer_state_dict)

FULL = StateDictOptions(full_state_dict=True)


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    msd = get_model_state_dict(model, options=FULL)
    osd = get_optimizer_state_dict(model, optimizer, options=FULL)
    if dist.get_rank() == 0:
        torch.save(dict(model=msd, optim=osd, epoch=int(epoch)), path)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    set_model_state_dict(model, ckpt["model"], options=FULL)
    set_optimizer_state_dict(model, optimizer, ckpt["optim"], options=FULL)
    return int(ckpt["epoch"])
