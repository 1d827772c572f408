# verdict: pass
# why: binds names with from-imports (torch.save, dist.barrier, get_rank) and writes through an open file object; FULL_STATE_DICT gathered on every rank.
from torch import load, save
from torch.distributed import barrier, get_rank
from torch.distributed.fsdp import FullyShardedDataParallel
from torch.distributed.fsdp import FullOptimStateDictConfig, FullStateDictConfig, StateDictType


def _full(model, rank0_only):
    return FullyShardedDataParallel.state_dict_type(
        model, StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=False, rank0_only=rank0_only),
        FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=rank0_only))


def save_checkpoint(model, optimizer, epoch, path):
    with _full(model, rank0_only=True):
        checkpoint = {
            "model": model.state_dict(),
            "optim": FullyShardedDataParallel.optim_state_dict(model, optimizer),
            "epoch": epoch,
        }
    if get_rank() == 0:
        with open(path, "wb") as f:
            save(checkpoint, f)
    barrier()


def load_checkpoint(model, optimizer, path):
    with open(path, "rb") as f:
        checkpoint = load(f, map_location="cpu")
    with _full(model, rank0_only=False):
        model.load_state_dict(checkpoint["model"])
        osd = FullyShardedDataParallel.optim_state_dict_to_load(model, optimizer, checkpoint["optim"])
        optimizer.load_state_dict(osd)
    return checkpoint["epoch"]
