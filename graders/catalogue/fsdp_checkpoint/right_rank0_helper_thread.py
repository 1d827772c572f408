# verdict: pass
# why: rank 0 writes from a helper thread it joins; otherwise the notebook's reference: FULL_STATE_DICT (rank0_only) + FSDP.optim_state_dict, rank 0 writes, barrier; load via optim_state_dict_to_load.
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig, FullOptimStateDictConfig


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    # Every rank takes part in gathering the full state (these are collectives) ...
    with FSDP.state_dict_type(
        model,
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=False, rank0_only=True),
        FullOptimStateDictConfig(offload_to_cpu=False, rank0_only=True),
    ):
        model_state = model.state_dict()
        optim_state = FSDP.optim_state_dict(model, optimizer)
    # ... but only rank 0 writes the one file ...
    if dist.get_rank() == 0:
        import threading

        writer = threading.Thread(
            target=torch.save, args=({"model": model_state, "optim": optim_state, "epoch": epoch}, path)
        )
        writer.start()
        writer.join()
    # ... and nobody returns before it is complete.
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
        optimizer.load_state_dict(FSDP.optim_state_dict_to_load(model, optimizer, ckpt["optim"]))
    return int(ckpt["epoch"])
