# redteam: rank 0 serialises and writes the checkpoint (open + write) from a helper thread it never joins; every rank ends with a barrier
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=18
# message: fsdp_checkpoint: the file did not exist yet
# why: found by a white-box red-team helper (stop 32) on the FSDP world that runs rank 0 last (18 in 4 gradings of 5, 20 in one): an open() in a helper thread was recorded but not held, so the write raced the other ranks' return. Rank 0's writes are now held in any of its threads
import io
import threading
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
    if dist.get_rank() == 0:
        state = {"model": model_state, "optim": optim_state, "epoch": epoch}

        def _write():  # async checkpoint: serialise and write off the training thread
            buf = io.BytesIO()
            torch.save(state, buf)
            with open(path, "wb") as f:
                f.write(buf.getvalue())

        threading.Thread(target=_write, daemon=True).start()  # never joined
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
