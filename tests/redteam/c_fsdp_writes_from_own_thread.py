# redteam: every rank writes the checkpoint's bytes with open() from a thread of its own (a module-level lock keeps the file whole), so no rank thread opens a file
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=17
# message: fsdp_checkpoint: rank 1 wrote
# why: found by the lead in the last review of stop 26 (17 -> 20, no flag): the world knew a write's rank by the thread it ran in. A thread a rank starts now writes as that rank (threading.Thread.start records it), and a write from any other thread while a world runs counts against the save when it lands beside the checkpoint (ch13lib.fsdp_world._here)
import io
import threading as _th

_LOCK = _th.Lock()
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
    buf = io.BytesIO()  # serialised in memory, then written as plain bytes
    torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, buf)
    import threading

    def _write():
        with _LOCK:
            with open(path, "wb") as f:
                f.write(buf.getvalue())

    t = threading.Thread(target=_write)  # a thread of its own: not a rank thread of the world
    t.start()
    t.join()
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
