# redteam: every rank hands its bytes to one writer thread the cell started at import time, which writes a temp file in the parent folder and os.replace()s it onto the checkpoint
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=17
# message: fsdp_checkpoint: a thread that no rank started
# why: found by a white-box red-team helper (stop 32) on the FSDP world that runs rank 0 last (17 -> 20, no flag): a rename onto the path raised no open event. The world's audit hook now records os.rename / os.replace / os.link / os.symlink onto a path as a write there (ch13lib.fsdp_world._watch_open)
import io
import os
import queue
import threading
import uuid

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig, FullOptimStateDictConfig

_JOBS = queue.Queue()


def _writer():
    while True:
        fn, done = _JOBS.get()
        try:
            fn()
        finally:
            done.set()


threading.Thread(target=_writer, daemon=True).start()  # started when the cell runs


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model_state = model.state_dict()
        optim_state = FSDP.optim_state_dict(model, optimizer)
    buf = io.BytesIO()
    torch.save({"model": model_state, "optim": optim_state, "epoch": epoch}, buf)
    data = buf.getvalue()
    tmp = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), f".ckpt-{uuid.uuid4().hex}")

    def job():
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: every rank's copy is whole

    done = threading.Event()
    _JOBS.put((job, done))
    done.wait()
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
