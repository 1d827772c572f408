"""Notebook 07's grading side (pipeline, tensor_parallel, zero1): what the hidden graders run on the
answer cell in the grading subject (kit/subject.py), and what a rank of a real world the subject
launches may run. Raw observations in plain data; graders/_parallelism.py and the graders judge
them with ch13lib.parallel_cases, which the notebook's self-checks share.

The threads worlds are ch13lib.parallel_sim's ``observe_*``, the self-checks' own runs, listed here
for the subject; ``rank_*`` is one rank of a relayed world whose broker is the judge
(kit/harnesses/procgroup_relay.py), handed its inputs by the judge
(``ch13lib.parallel_cases.rank_inputs``); ``run_real`` one rank of a real torch.distributed world
(kit/harnesses/collective_launch.py ``launch_cell``).
"""

from __future__ import annotations

import torch

from ch13lib import parallel_sim as sim
from ch13lib.collective_launch import DistComm, load_source, own_traceback
from ch13lib.parallel_cases import (
    LOSSES,
    PipeCase,
    Stage,
    TPCase,
    ZeroCase,
    make_batch,
    make_mlp,
    make_stages,
    rank_inputs,
    tp_shard,
)
from ch13lib.parallel_sim import (
    TimedStage,
    _as_case,
    _function,
    _grads,
    _one_thread,
    _returned,
    _zero_rank,
    _zero_steps,
)
from kit.harnesses.procgroup_relay import serve_report

# What a rank of a world the subject launches may run (kit/harnesses/collective_launch.py).
RANK_API = ("run_real",)

# What the hidden graders may run on an answer cell in the grading subject (kit/subject.py): a whole
# threads world, or one rank of a relayed world.
SUBJECT_API = (
    "observe_pipeline",
    "observe_tp",
    "observe_zero",
    "rank_pipeline",
    "rank_tp",
    "rank_zero",
    "rank_zero_step",
)


# ---------------------------------------------------------------------------------------------
# a whole world, its ranks threads of the subject (the self-checks' runs: ch13lib.parallel_sim)
# ---------------------------------------------------------------------------------------------
def observe_pipeline(cell, case: PipeCase, **kwargs) -> dict:
    """``ch13lib.parallel_sim.observe_pipeline``: the case on the threads world."""
    return sim.observe_pipeline(cell, case, **kwargs)


def observe_tp(cell, case: TPCase, **kwargs) -> dict:
    """``ch13lib.parallel_sim.observe_tp``: the case on the threads world."""
    return sim.observe_tp(cell, case, **kwargs)


def observe_zero(cell, case: ZeroCase, **kwargs) -> dict:
    """``ch13lib.parallel_sim.observe_zero``: the case on the threads world."""
    return sim.observe_zero(cell, case, **kwargs)


# ---------------------------------------------------------------------------------------------
# one rank of a relayed world (the judge is the broker: ranks share no memory)
# ---------------------------------------------------------------------------------------------
def rank_pipeline(cell, case: PipeCase, rank: int, *, fn_name: str = "gpipe_step", inputs: dict | None = None):
    """Rank ``rank`` (stage ``rank``) of ``case`` in a world whose broker is the judge. A talking
    harness (kit/subject.py); the stage's clock charges go to the broker as messages, which keeps
    the schedule. ``inputs``: this rank's values as ``parallel_cases.rank_inputs`` gives them (the
    judge's hidden values); without them, the case's own. Returns ``{"returned", "grads"}`` as
    ``ch13lib.parallel_sim.observe_pipeline`` reports them per rank."""
    _one_thread()
    case = _as_case(case, PipeCase)
    fn = _function(cell, fn_name, "a_function", f"{fn_name}(stage, batch, target, n_micro, comm, loss_fn)")
    P = case.stages
    given = inputs if type(inputs) is dict else rank_inputs(case, rank)
    stage = Stage(case.widths[rank], case.widths[rank + 1], rank == P - 1)
    with torch.no_grad():
        stage.linear.weight.copy_(given["weight"])
        stage.linear.bias.copy_(given["bias"])
    if given["grads"] is not None:
        for p, g in zip(stage.parameters(), given["grads"]):
            p.grad = g.clone()
    batch, target = given["batch"], given["target"]

    def body(comm):
        timed = TimedStage(stage, comm._advance, case.micro_rows)
        returned = fn(
            timed,
            batch.clone() if rank == 0 else None,
            target.clone() if rank == P - 1 else None,
            case.n_micro,
            comm,
            LOSSES[case.loss],
        )
        return {"returned": _returned(returned), "grads": _grads(stage)}

    return (yield from serve_report(body, rank, P))


def rank_tp(cell, case: TPCase, rank: int, *, fn_name: str = "tp_mlp", device: str = "cpu", inputs: dict | None = None):
    """Rank ``rank`` of ``case`` in a world whose broker is the judge (``inputs`` as for
    :func:`rank_pipeline`): ``{"output": y or its type's name}``."""
    _one_thread()
    case = _as_case(case, TPCase)
    fn = _function(cell, fn_name, "a_function", f"{fn_name}(x, w1, b1, w2, b2, comm)")
    given = inputs if type(inputs) is dict else rank_inputs(case, rank)
    args = tuple(t.to(device) for t in given["args"])

    def body(comm):
        out = fn(*args, comm)
        return {"output": out.detach().to("cpu").clone() if isinstance(out, torch.Tensor) else type(out).__name__}

    return (yield from serve_report(body, rank, case.world_size))


def rank_zero(
    cell, case: ZeroCase, rank: int, *, fn_name: str = "ZeroAdam", device: str = "cpu", inputs: dict | None = None
):
    """Rank ``rank`` of ``case`` in a world whose broker is the judge (``inputs`` as for
    :func:`rank_pipeline`): ``{"steps", "state_numel", "held", "moved"}`` as ``ch13lib.parallel_sim.observe_zero``
    reports them per rank."""
    _one_thread()
    case = _as_case(case, ZeroCase)
    cls = _function(cell, fn_name, "a_class", f"{fn_name}(params, comm, lr, betas, eps)")
    given = inputs if type(inputs) is dict else None

    def body(comm):
        return _zero_rank(cls, case, rank, comm, device, given)

    return (yield from serve_report(body, rank, case.world_size))


def rank_zero_step(
    cell, case: ZeroCase, rank: int, *, fn_name: str = "ZeroAdam", device: str = "cpu", inputs: dict | None = None
):
    """One step of rank ``rank`` of ``case`` in a world whose broker is the judge, in a process that
    took no step before: ``inputs`` holds the parameters' values now, this step's gradients (as a
    one-step list) and ``state``, what the last step's ``state_dict()`` returned (None at the first).
    Returns ``{"steps", "state_numel", "moved", "state"}``: the state goes back to the judge, which
    measures it and hands it to the next step's process."""
    _one_thread()
    case = _as_case(case, ZeroCase)
    cls = _function(cell, fn_name, "a_class", f"{fn_name}(params, comm, lr, betas, eps)")
    given = inputs if type(inputs) is dict else {**rank_inputs(case, rank), "state": None}

    def body(comm):
        seen = _zero_steps(cls, case, comm, device, given, range(1), given.get("state"))
        del seen["held"]  # the judge measures the state it is handed
        return seen

    return (yield from serve_report(body, rank, case.world_size))


# ---------------------------------------------------------------------------------------------
# the same runs on a real torch.distributed world (a RANK_API entry: collective_launch)
# ---------------------------------------------------------------------------------------------
KINDS = {"pipeline": (PipeCase, "stages"), "tp": (TPCase, "world_size"), "zero": (ZeroCase, "world_size")}


def _tolist(t):
    return None if t is None else t.detach().to("cpu", torch.float64).reshape(-1).tolist()


def _real_case(kind: str, fn, case, rank: int, comm, device: str) -> dict:
    if kind == "pipeline":
        stages = make_stages(case, device=device)
        batch, target = make_batch(case, device)
        P = case.stages
        ret = fn(
            stages[rank],
            batch if rank == 0 else None,
            target if rank == P - 1 else None,
            case.n_micro,
            comm,
            LOSSES[case.loss],
        )
        return {"returned": _returned(ret), "grads": [_tolist(g) for g in _grads(stages[rank])]}
    if kind == "tp":
        full = make_mlp(case, device)
        out = fn(*tp_shard(full, case, rank), comm)
        if not isinstance(out, torch.Tensor):
            return {"output": type(out).__name__, "calls": comm.log}
        return {
            "output": _tolist(out),
            "shape": list(out.shape),
            "dtype": str(out.dtype).replace("torch.", ""),
            "calls": comm.log,
        }
    seen = _zero_rank(fn, case, rank, comm, device)
    return {
        "steps": [_tolist(s) for s in seen["steps"]],
        "state_numel": seen["state_numel"],
        "held": seen["held"],
        "moved": seen["moved"],
        "calls": comm.log,
    }


def run_real(payload: dict) -> dict:
    """One rank of a real world: run the answer on each case (``payload["kind"]``: pipeline, tp, zero)
    in a sub-group of the case's size; stop at the first error (the other ranks then fail on the
    process group's timeout)."""
    import torch.distributed as dist

    rank = dist.get_rank()
    device = payload.get("device", "cpu")
    kind = payload["kind"]
    cls, size_field = KINDS[kind]
    module = load_source(payload["source"], payload["name"])
    fn = getattr(module, payload["function"])
    cases = [cls(**c) for c in payload["cases"]]
    groups = {w: dist.new_group(list(range(w))) for w in sorted({getattr(c, size_field) for c in cases})}
    torch.set_num_threads(1)
    results = []
    for case in cases:
        w = getattr(case, size_field)
        if rank >= w:
            results.append(None)
            continue
        comm = DistComm(groups[w], list(range(w)), device)
        try:
            seen = _real_case(kind, fn, case, rank, comm, device)
            if device != "cpu":
                torch.cuda.synchronize()
        except BaseException as e:  # noqa: BLE001 - the student's error, reported per case
            results.append({"error": own_traceback(e)})
            break
        results.append(seen)
    return {"cases": results}
