# redteam: a checkpoint without the optimizer's state ("optim": {}, as wrong_no_optim_state writes it), whose load_checkpoint restores Adam's moments from a module-level dict the save filled in memory, keyed by path: a resume in the same process looks exact, a resume from the file alone restarts Adam from scratch
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=11
# message: fsdp_checkpoint: no optimizer state
# why: the resumes run in the process that saved (the rank threads share the cell's module), and nothing checks that load_checkpoint restores from the file's bytes: the optimizer state never written to the file still reaches the resumed optimizer. Stopped (stop 36): the resume runs in a sibling subject that never saved (graders/api.py Answer.run_fresh), from the file's bytes written afresh in a folder of their own (fsdp_ckpt.observe_resume file=)
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig, FullOptimStateDictConfig

_KEPT = {}  # path -> the full optimizer state, as every rank gathered it


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    with FSDP.state_dict_type(
        model,
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=False, rank0_only=True),
        FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False),
    ):
        model_state = model.state_dict()
        optim_state = FSDP.optim_state_dict(model, optimizer)
    if dist.get_rank() == 0:
        _KEPT[path] = optim_state
        torch.save({"model": model_state, "optim": {}, "epoch": epoch}, path)
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(
        model,
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
        FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False),
    ):
        model.load_state_dict(ckpt["model"])
        optim = ckpt["optim"] or _KEPT.get(path, {})
        if optim:
            optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, optim))
    return int(ckpt["epoch"])
