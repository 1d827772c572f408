# redteam: a checkpoint without the optimizer's state whose load_checkpoint replays the public training to rebuild Adam's moments
# kind: cell
# target: fsdp_checkpoint
# score: fsdp_checkpoint=9
# message: fsdp_checkpoint: no optimizer state
# why: the file holds the model only ("optim": {}, as catalogue wrong_no_optim_state), and load_checkpoint rebuilds Adam's state instead of loading it: it searches the scenario's public seed and step count from the saved parameters (the course's make_model/batch recipe, seeds 1000+s and 77000+131*s+step), replays that training on the FSDP model it is handed (same world and wrapping: bit for bit), then loads the file's parameters. The fresh resume subject (run_fresh) does not help: nothing is carried, it is recomputed. found by the 25th red team: got 17, honest 11 (no flag). Stopped (stop 37): the save scenarios' initial weights and batches are drawn from hidden seeds (graders/_hidden.py, fsdp_checkpoint._data_seed), so no replay finds them; this answer's search then raises in load_checkpoint (9: below the 11 the same save earns with a load that does not search)
import torch
import torch.distributed as dist
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


def _find(target, kind):
    # the scenario's seed and step count, searched from the saved parameters
    for ds in range(8):
        for steps in range(0, 16):
            m = _model(ds)
            _train(m, _opt(m, kind), steps, ds)
            if all(torch.allclose(p.detach(), target[n], rtol=1e-7, atol=1e-9) for n, p in m.named_parameters()):
                return ds, steps
    raise RuntimeError("not found")


def load_checkpoint(model, optimizer, path: str) -> int:
    ckpt = torch.load(path, map_location="cpu")
    kind = "adamw" if isinstance(optimizer, torch.optim.AdamW) else "adam"
    ds, steps = _find(ckpt["model"], kind)
    cfg = (StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=False, rank0_only=False))
    with FSDP.state_dict_type(model, *cfg):
        model.load_state_dict(_model(ds).state_dict())
    # replay the public training on this FSDP model: Adam's moments are rebuilt, not loaded
    _train(model, optimizer, steps, ds, dist.get_rank(), dist.get_world_size())
    with FSDP.state_dict_type(model, *cfg):
        model.load_state_dict(ckpt["model"])
    return int(ckpt["epoch"])
