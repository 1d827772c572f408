# verdict: pass
# why: the torch.distributed.checkpoint.state_dict full-state API (get_state_dict / set_state_dict with full_state_dict=True), every rank loads the file.
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    options = StateDictOptions(full_state_dict=True)
    model_state, optim_state = get_state_dict(model, optimizer, options=options)
    if dist.get_rank() == 0:
        torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, path)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    set_state_dict(model, optimizer, model_state_dict=ckpt["model"], optim_state_dict=ckpt["optim"],
                   options=StateDictOptions(full_state_dict=True))
    return ckpt["epoch"]
