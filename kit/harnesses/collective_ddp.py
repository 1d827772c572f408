"""Notebook 03's grading side for ``ddp_average``: what the hidden grader runs on the answer cell in
the grading subject (kit/subject.py), what a rank of a real world the subject launches may run, and
what the judge hands each rank of a relayed world. Records only, no verdict: graders/ddp_average.py
judges them with ch13lib.collective_ddp (``reference``, ``compare``, ``fit_scale``), which the
notebook's self-check shares, as it shares ``observe`` and ``observe_ddp_rank``.
"""

from __future__ import annotations

import torch

from ch13lib import collective_ddp as ddp
from ch13lib.collective_ddp import _model_and_shards, observe
from kit.harnesses.procgroup_relay import serve_report

# What the hidden grader may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("observe_alone", "rank_ddp")
# What a rank of a world the subject launches may run (kit/harnesses/collective_launch.py).
RANK_API = ("observe_ddp_rank",)


def observe_ddp_rank(payload: dict) -> dict:
    """One rank of a real world: ``ch13lib.collective_ddp.observe_ddp_rank``, the self-check's own."""
    return ddp.observe_ddp_rank(payload)


def rank_inputs(sc: dict, rank: int, world: int) -> dict:
    """Judge side: what rank ``rank`` of a relayed world is given of scenario ``sc``, its seed
    left out (the initial weights and the rank's own shards only: no rank can rebuild another's)."""
    model, shards = _model_and_shards(sc, "cpu", rank, world)
    given = {k: v for k, v in sc.items() if k != "seed"}
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return dict(given, weights=weights, shards=[[x.clone(), y.clone()] for x, y in shards])


class _Done:
    """What ``dist.all_reduce(..., async_op=True)`` returns on a relayed rank: the call is done."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


def _relayed_dist(comm_of):
    """torch.distributed's calls that DDP by hand makes, on a relayed rank: every all_reduce a
    message to the judge's world (``comm_of()``: this rank's RemoteComm). Nothing else of a process
    group exists in the rank's process (no store, no peer connections)."""
    import torch.distributed as dist

    def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        if not isinstance(tensor, torch.Tensor):  # raised in the rank, as torch.distributed raises it
            raise TypeError("Invalid function argument. Expected parameter `tensor` of type torch.Tensor")
        comm_of().all_reduce(tensor, op)
        return _Done() if async_op else None

    return {
        "is_initialized": lambda: True,
        "get_rank": lambda group=None: comm_of().rank,
        "get_world_size": lambda group=None: comm_of().world_size,
        "all_reduce": all_reduce,
    }


def rank_ddp(cell, name: str, rank: int, *, inputs: dict, function: str = "average_gradients"):
    """Subject side of one rank of a relayed DDP world (a talking harness; one subject process per
    rank, the judge the broker: every byte between ranks is a message it relays, and the ranks
    share no memory and no files). ``inputs``: ``{"world", "scenarios"}``, the scenarios as
    :func:`rank_inputs` gives them. The cell is loaded afresh with torch.distributed's calls
    relayed (:func:`_relayed_dist`), so ``from torch.distributed import all_reduce`` is relayed too.
    Returns ``{"scenarios": observe(...)}`` as :func:`observe_ddp_rank` does."""
    import torch.distributed as dist

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    comm: list = []
    relayed = _relayed_dist(lambda: comm[0])
    modules = (dist, dist.distributed_c10d)  # dist re-exports distributed_c10d's functions: either spelling
    saved = [(m, k, getattr(m, k)) for m in modules for k in relayed]
    for m, k, _ in saved:
        setattr(m, k, relayed[k])
    try:
        fn = getattr(cell.load(), function)

        def body(c):
            comm.append(c)
            return {"scenarios": observe(fn, inputs["scenarios"], rank=rank, world=inputs["world"])}

        return (yield from serve_report(body, rank, inputs["world"]))
    finally:
        for m, k, v in saved:
            setattr(m, k, v)


def observe_alone(cell, scenarios: list[dict], function: str = "average_gradients") -> list[dict]:
    """Subject side: :func:`observe` at world size 1 in this process (gloo over an in-memory
    HashStore, no port, no process started), so a stub or a crash shows at once. The stub's
    NotImplementedError is raised as such."""
    import torch.distributed as dist

    fn = getattr(cell.module, function)
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        return observe(fn, scenarios, stub_raises=True)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
