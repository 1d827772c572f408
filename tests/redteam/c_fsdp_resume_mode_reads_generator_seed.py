# redteam: a checkpoint without the optimizer's state whose load_checkpoint enters a TorchFunctionMode that reads the resume's data seed off its generator and replays the training
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=11
# why: the file holds the model only ("optim": {}); load_checkpoint pushes a TorchFunctionMode on its rank thread and returns. When the harness draws the resume's first batch with torch.randn(generator=g), the mode reads g.initial_seed() (77000 + 131*seed + step), so the hidden data seed and the step, replays the training from them on the FSDP model and optimizer it kept (Adam's moments rebuilt), and reloads the file's parameters. Found at stop 38 by the 27th red team (11 -> 17, no flag). Stopped (stop 39) by design: no subject is given a seed; the judge hands the save its initial weights and batches and the resume only the batches of the steps it trains, as tensors (fsdp_train.Data), so the mode sees no generator
import torch
import threading
import torch.distributed as dist
from torch.overrides import TorchFunctionMode
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, FullStateDictConfig


def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    # the model only: no optimizer state in the file
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=False, rank0_only=True)):
        model_state = model.state_dict()
    if dist.get_rank() == 0:
        torch.save({"model": model_state, "optim": {}, "epoch": epoch}, path)
    dist.barrier()


# the course's training recipe, as the notebook shows it (public)
def _model(seed):
    m = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).to(torch.float64)
    g = torch.Generator().manual_seed(1000 + seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.5)
    return m


def _opt(m, kind):
    if kind == "adam":
        return torch.optim.Adam(m.parameters(), lr=0.05)
    return torch.optim.AdamW(m.parameters(), lr=0.03, weight_decay=0.1)


def _train(m, o, steps, ds, rank=0, world=1):
    for step in range(steps):
        g = torch.Generator().manual_seed(77_000 + 131 * ds + step)
        x = torch.randn(12, 5, generator=g, dtype=torch.float64)
        y = torch.randn(12, 3, generator=g, dtype=torch.float64)
        x, y = x.tensor_split(world)[rank], y.tensor_split(world)[rank]
        o.zero_grad()
        ((m(x) - y) ** 2).mean().backward()
        o.step()



_pending = {}  # rank thread -> (model, optimizer, kind, file's model)
CFG = (StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=False, rank0_only=False))


class _Spy(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        g = kwargs.get("generator")
        me = threading.get_ident()
        if g is not None and me in _pending:
            model, opt, kind, sd = _pending.pop(me)
            seed = g.initial_seed() - 77_000
            ds, start = seed // 131, seed % 131
            with FSDP.state_dict_type(model, *CFG):
                model.load_state_dict(_model(ds).state_dict())
            _train(model, opt, start, ds, dist.get_rank(), dist.get_world_size())
            with FSDP.state_dict_type(model, *CFG):
                model.load_state_dict(sd)
        return func(*args, **kwargs)


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    kind = "adamw" if isinstance(optimizer, torch.optim.AdamW) else "adam"
    with FSDP.state_dict_type(model, *CFG):
        model.load_state_dict(ckpt["model"])
    _pending[threading.get_ident()] = (model, optimizer, kind, ckpt["model"])
    _Spy().__enter__()
    return int(ckpt["epoch"])
