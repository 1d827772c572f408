"""The small model, data and training loop that notebook 05's checks train under FSDP on CPU.

Everything is float64 and built from explicit ``torch.Generator`` s (rank threads share torch's
global RNG), so a run is reproducible bit for bit and two runs that differ only in how the
gradient sum is split across ranks agree to ~1e-15.

Each step uses a global batch of ``GLOBAL_BATCH`` samples; rank r of W takes the r-th of W equal
slices. Every rank's loss is the mean over its slice and FSDP averages gradients over ranks, so
the update is the full-batch update whatever W is (up to rounding): a checkpoint written at one
world size can be resumed at another and must continue the same trajectory.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.distributed as dist
from torch import nn

GLOBAL_BATCH = 12  # divisible by 1, 2, 3, 4 and 6
DIMS = (5, 7, 3)
DTYPE = torch.float64


def make_model(seed: int = 0, init: dict[str, torch.Tensor] | None = None) -> nn.Module:
    """A plain (unwrapped) 2-layer MLP, its parameters drawn from ``seed``, or copied from ``init``
    (parameter name -> tensor)."""
    model = nn.Sequential(nn.Linear(DIMS[0], DIMS[1]), nn.Tanh(), nn.Linear(DIMS[1], DIMS[2]))
    model = model.to(DTYPE)
    g = torch.Generator().manual_seed(1000 + seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(init[name] if init is not None else torch.randn(p.shape, generator=g, dtype=DTYPE) * 0.5)
    return model


def wrap(model: nn.Module, nested: bool = False):
    """FSDP with FULL_SHARD and defaults otherwise, on CPU (``device_id`` cpu, gloo)."""
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import ShardingStrategy

    kwargs = {}
    if nested:
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy

        kwargs["auto_wrap_policy"] = ModuleWrapPolicy({nn.Linear})
    device = torch.device("cpu")
    if torch.cuda.is_available() and dist.is_initialized() and dist.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    return FSDP(model.to(device), sharding_strategy=ShardingStrategy.FULL_SHARD, device_id=device, **kwargs)


def make_optimizer(model: nn.Module, kind: str = "adam"):
    if kind == "adam":
        return torch.optim.Adam(model.parameters(), lr=0.05)
    if kind == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=0.03, weight_decay=0.1)
    raise ValueError(kind)


def batch(step: int, data_seed: int = 0):
    g = torch.Generator().manual_seed(77_000 + 131 * data_seed + step)
    x = torch.randn(GLOBAL_BATCH, DIMS[0], generator=g, dtype=DTYPE)
    y = torch.randn(GLOBAL_BATCH, DIMS[2], generator=g, dtype=DTYPE)
    return x, y


@dataclasses.dataclass(frozen=True)
class Data:
    """What a graded run trains from, as tensors: the model's initial parameters (empty for a
    resume, whose weights come from the file) and the global batch of each step it trains.

    The grader draws them from a hidden seed and hands the subject these tensors, never the seed:
    a cell that could read a seed off the harness's generators could replay the training and rebuild
    Adam's state without the checkpoint holding it."""

    init: dict
    batches: dict  # step -> (x, y)

    @classmethod
    def drawn(cls, seed: int, start: int, steps: int, *, with_init: bool = True) -> Data:
        """The course's recipe: make_model(seed)'s parameters and batch(step, seed) for each step."""
        init = {n: p.detach().clone() for n, p in make_model(seed).named_parameters()} if with_init else {}
        return cls(init, {s: batch(s, seed) for s in range(start, start + steps)})

    def to_wire(self) -> dict:
        return {"init": dict(self.init), "batches": [[s, x, y] for s, (x, y) in sorted(self.batches.items())]}

    @classmethod
    def from_wire(cls, d: dict) -> Data:
        return cls(dict(d["init"]), {int(s): (x, y) for s, x, y in d["batches"]})


def train(model, optimizer, start: int, steps: int, data: int | Data = 0, rank: int = 0, world_size: int = 1) -> None:
    """Steps ``start .. start+steps-1``; this rank trains on its slice of each global batch
    (``data``: a public seed of :func:`batch`, or the batches themselves)."""
    device = next(model.parameters()).device
    for step in range(start, start + steps):
        x, y = data.batches[step] if isinstance(data, Data) else batch(step, data)
        x, y = x.tensor_split(world_size)[rank].to(device), y.tensor_split(world_size)[rank].to(device)
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()


def full_params(model) -> dict[str, torch.Tensor]:
    """The full (unsharded) parameters by their plain names, on CPU. A collective under FSDP."""
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    if isinstance(model, FSDP):
        with FSDP.summon_full_params(model, writeback=False):
            return {_clean(n): p.detach().cpu().clone() for n, p in model.named_parameters()}
    return {n: p.detach().cpu().clone() for n, p in model.named_parameters()}


def _clean(name: str) -> str:
    return name.replace("_fsdp_wrapped_module.", "").replace("_flat_param", "")


def plain_run(steps: int, *, seed: int = 0, kind: str = "adam", data_seed: int = 0):
    """The same training without FSDP on one process: (model, optimizer) after ``steps``."""
    model = make_model(seed)
    opt = make_optimizer(model, kind)
    train(model, opt, 0, steps, data_seed)
    return model, opt
