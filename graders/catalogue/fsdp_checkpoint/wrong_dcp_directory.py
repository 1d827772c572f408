# verdict: fail
# sample: file_format
# message: is a directory
# why: uses torch.distributed.checkpoint.save: a directory of per-rank shards, not one file torch.load can read.
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    model_state, optim_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optim": optim_state, "epoch": epoch}, checkpoint_id=path)


def load_checkpoint(model, optimizer, path: str) -> int:
    model_state, optim_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optim": optim_state, "epoch": 0}
    dcp.load(state, checkpoint_id=path)
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return int(state["epoch"])
