# redteam: every rank serialises the checkpoint into an io.BytesIO with torch.save and writes the bytes with open(path, "wb"), which torch.save's watch never sees
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=17
# message: fsdp_checkpoint: rank 1 wrote
# why: found by the lead while closing c_fsdp_unwrapped_save (17 -> 20, no flag, no introspection at all). The world now also records, through an audit hook, every file a rank thread opens for writing, however it is opened (ch13lib.fsdp_world._watch_open)
import io
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
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    dist.barrier()


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=False),
                              FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=False)):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
