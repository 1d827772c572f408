"""Harnesses of notebook 07: run an answer on the simulated process group or a real world, observe.

Each ``observe_*`` function runs in the process that holds the answer cell (the subject, or the
student's notebook for the self-checks): it builds the case's inputs, runs the cell's function on
every rank of a :class:`ch13lib.procgroup.SimWorld` and returns what it saw as plain data (each
rank's tensors and return value, the comm calls each rank made, the schedule on the logical clock).
It decides nothing; ``ch13lib.parallel_cases`` (and the hidden graders) do. The grading side
(kit/harnesses/parallel_sim.py, never released) runs the same on one rank of a world whose broker
is the judge, and on a real torch.distributed world.

The pipeline's clock (CONTRACT 8.3): rank r's stage is wrapped in :class:`TimedStage`, whose
forward charges ``rows / micro_rows`` ticks to rank r before it computes, and whose output carries
an autograd node that charges the same again when the backward pass goes through it. A receive
completes no earlier than the tick of its send (procgroup). The schedule's length is the largest
tick any rank reaches.
"""

from __future__ import annotations

import dataclasses
import sys
from fractions import Fraction

import torch
from torch import nn

from ch13lib.cell import not_defined, rank_copies
from ch13lib.collective_cases import SimFailure, run_world
from ch13lib.lang import Messages
from ch13lib.parallel_cases import (
    LOSSES,
    ZERO_DEFAULTS,
    PipeCase,
    TPCase,
    ZeroCase,
    make_batch,
    make_mlp,
    make_stages,
    rank_inputs,
    state_elements,
    tp_shard,
)

# What a harness says itself, in the course's language (ch13lib/lang.py; the subject inherits the judge's).
M = Messages(
    a_function=("一个函数 `{sig}`", "a function `{sig}`"),
    a_class=("一个类 `{sig}`", "a class `{sig}`"),
    not_plain=(
        "{path} 是一个 {type}: state_dict() 只能包含张量、数字、字符串和字节, 放在 dict、list 和 tuple 中 "
        "(优化器状态以普通数据的形式从一步传到下一步)",
        "{path} is a {type}: a state_dict() holds tensors, numbers, strings and bytes, in "
        "dicts, lists and tuples (the optimizer's state crosses from one step to the next as plain data)",
    ),
)


def _one_thread() -> None:
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def _function(cell, name: str, what: str, signature: str):
    """The cell's ``name``, which must be callable (``what``: ``a_function`` or ``a_class``, of
    ``signature``: what the contract needs)."""
    fn = getattr(cell.module, name, None)
    if not callable(fn):
        needs = M.both(what, sig=signature)
        raise SimFailure(not_defined(name, getattr(cell, "grade_id", "answer"), needs))
    return fn


def _returned(v):
    """A return value as plain data the verdicts read."""
    if v is None:
        return None
    if isinstance(v, float):
        return {"kind": "float", "value": float(v)}
    if isinstance(v, torch.Tensor):
        return {"kind": "tensor", "value": float(v.detach().reshape(-1)[0]) if v.numel() == 1 else list(v.shape)}
    return {"kind": "other", "type": type(v).__name__}


# ---------------------------------------------------------------------------------------------
# pipeline
# ---------------------------------------------------------------------------------------------
class _BackwardTick(torch.autograd.Function):
    """Identity whose backward charges a stage's backward work to its rank's clock."""

    @staticmethod
    def forward(ctx, out, tag):
        ctx.tag = tag
        return out.view_as(out)

    @staticmethod
    def backward(ctx, grad):
        clock, ticks, first = ctx.tag
        clock(ticks, "B", first)
        return grad, None


class TimedStage(nn.Module):
    """A pipeline stage on the logical clock: forward and backward each cost rows / micro_rows ticks."""

    def __init__(self, inner: nn.Module, clock, micro_rows: int) -> None:
        super().__init__()
        self._inner = inner
        self.in_features, self.out_features = inner.in_features, inner.out_features
        self._clock = clock  # clock(ticks, kind, first micro-batch)
        self._rows = micro_rows
        self._done = 0  # forward micro-batches so far (labels the chart)

    def forward(self, x):
        # rows of in_features values, however x is shaped: a (1, B, d) batch is B rows of work
        rows = x.numel() // max(1, self.in_features)
        ticks = Fraction(rows, self._rows)
        first = self._done
        self._done += max(1, round(ticks))
        self._clock(ticks, "F", first)
        out = self._inner(x)
        if torch.is_grad_enabled() and out.requires_grad:
            out = _BackwardTick.apply(out, (self._clock, ticks, first))
        return out


def _grads(stage: nn.Module) -> list:
    return [p.grad.detach().to("cpu").clone() if p.grad is not None else None for p in stage.parameters()]


def _as_case(case, cls):
    if isinstance(case, cls):
        return case
    return cls(**case)


def observe_pipeline(cell, case: PipeCase, *, fn_name: str = "gpipe_step", guard_s: float = 20.0) -> dict:
    """Run ``gpipe_step`` on the simulated group: each rank's return value and .grad, and the schedule.

    Returns ``{"returns", "grads", "length", "clock", "timeline"}`` (timeline: (rank, start, end,
    "F" or "B", first micro-batch) per stage call)."""
    from ch13lib.procgroup import SimWorld

    _one_thread()
    case = _as_case(case, PipeCase)
    _function(cell, fn_name, "a_function", f"{fn_name}(stage, batch, target, n_micro, comm, loss_fn)")
    P = case.stages
    fns = rank_copies(cell, fn_name, P)  # each rank its own module, as a process
    world = SimWorld(P, policy=case.policy, seed=case.schedule_seed, guard_s=guard_s)
    stages = make_stages(case)
    batch, target = make_batch(case)
    returns = [None] * P

    def clock_of(r):
        return lambda ticks, kind, first: world.advance(r, ticks, (kind, first))

    timed = [TimedStage(stages[r], clock_of(r), case.micro_rows) for r in range(P)]

    def body(r, comm):
        returns[r] = fns[r](
            timed[r],
            batch.clone() if r == 0 else None,
            target.clone() if r == P - 1 else None,
            case.n_micro,
            comm,
            LOSSES[case.loss],
        )

    run_world(world, body, case, fn_name, p2p=True)
    return {
        "returns": [_returned(v) for v in returns],
        "grads": [_grads(st) for st in stages],
        "length": float(world.length()),
        "clock": [float(c) for c in world.clock],
        "timeline": [(r, float(a), float(b), str(lab[0]), int(lab[1])) for r, a, b, lab in world.timeline],
    }


# ---------------------------------------------------------------------------------------------
# tensor parallelism
# ---------------------------------------------------------------------------------------------
def observe_tp(cell, case: TPCase, *, fn_name: str = "tp_mlp", device: str = "cpu", guard_s: float = 20.0) -> dict:
    """Run ``tp_mlp`` on the simulated group: each rank's output and every comm call it made."""
    from ch13lib.procgroup import SimWorld

    _one_thread()
    case = _as_case(case, TPCase)
    _function(cell, fn_name, "a_function", f"{fn_name}(x, w1, b1, w2, b2, comm)")
    W = case.world_size
    fns = rank_copies(cell, fn_name, W)  # each rank its own module, as a process
    full = make_mlp(case, device)
    args = [tp_shard(full, case, r) for r in range(W)]
    outputs = [None] * W
    world = SimWorld(W, policy=case.policy, seed=case.schedule_seed, guard_s=guard_s)

    def body(r, comm):
        outputs[r] = fns[r](*args[r], comm)

    run_world(world, body, case, fn_name, p2p=True, collectives=True, all_reduce=True)
    return {
        "outputs": [o.detach().to("cpu").clone() if isinstance(o, torch.Tensor) else type(o).__name__ for o in outputs],
        "calls": [[{k: v for k, v in c.items() if k != "rank"} for c in world.log if c["rank"] == r] for r in range(W)],
    }


# ---------------------------------------------------------------------------------------------
# ZeRO-1
# ---------------------------------------------------------------------------------------------
def _plain(state, path: str = "state_dict()"):
    """A copy of what ``state_dict()`` returned as the plain data that crosses between steps (the
    wire's types: tensors, numpy arrays, numbers, text, bytes, and lists, tuples, dicts and sets of
    them), so that a new optimizer never shares memory with the old one; TypeError for anything else."""
    if isinstance(state, torch.Tensor):
        t = state.detach().to("cpu")
        return torch.empty(t.shape, dtype=t.dtype).copy_(t)
    if state is None or type(state) in (bool, int, float, complex, str, bytes):
        return state
    if type(state) is dict:
        return {_plain(k, path): _plain(v, f"{path}[{k!r}]") for k, v in state.items()}
    if type(state) in (list, tuple, set):
        return type(state)(_plain(v, f"{path}[{i}]") for i, v in enumerate(state))
    np = sys.modules.get("numpy")
    if np is not None and type(state) is np.ndarray and state.dtype.kind in "biufc":
        return state.copy()
    raise TypeError(M("not_plain", path=path, type=type(state).__name__))


def _zero_steps(
    cls, case: ZeroCase, comm, device: str, given: dict, steps: range, state=None, *, fresh: list | None = None
) -> dict:
    """The optimizer's ``steps`` of ``case`` on one rank, from the parameters' values and gradients in
    ``given`` (``rank_inputs``) and ``state`` (a ``state_dict()`` from the step before, or None).

    Every step is taken by a new optimizer object: ``cls(params, comm, ...)``, then
    ``load_state_dict(state)`` with a copy of what the last one's ``state_dict()`` returned, then
    ``step()`` (CONTRACT 8.5). So what an optimizer keeps from one step to the next is what its
    ``state_dict()`` says, and a relayed world can take each step in a fresh process, where nothing
    else survives. The model's Parameter objects are the judge's: it feeds the gradients and reads the
    values through them, wherever the optimizer keeps their storage. ``fresh``: the class for each
    step, each from a new run of the cell, and new Parameter objects every step: in one process, what
    a fresh process per step leaves the optimizer (a notebook's self-check, as the state test grades)."""
    params = tuple(nn.Parameter(t.to(device).clone()) for t in given["params"])
    kept = [(p.shape, p.dtype, p.device, p.requires_grad) for p in params]
    hyper = {"lr": case.lr, "betas": tuple(case.betas), "eps": case.eps}
    elsize = params[0].element_size() if params else 8
    seen = {"steps": [], "state_numel": None, "held": 0, "moved": [], "state": state}
    moved: set = set()
    for s in steps:
        if fresh is not None:
            cls = fresh[s]
            moved |= {i for i, p in enumerate(params) if (p.shape, p.dtype, p.device, p.requires_grad) != kept[i]}
            params = tuple(nn.Parameter(p.detach().clone()) for p in params)
        # the contract's defaults are left to the class's own signature: a wrong default shows
        opt = cls(list(params), comm) if hyper == ZERO_DEFAULTS else cls(list(params), comm, **hyper)
        if state is not None:
            opt.load_state_dict(_plain(state))
        for p, g in zip(params, (t.to(device) for t in given["grads"][s])):
            p.grad = g
        opt.step()
        seen["steps"].append(torch.cat([p.detach().reshape(-1).to("cpu") for p in params]).clone())
        state = _plain(opt.state_dict())
        seen["held"] = max(seen["held"], state_elements(state, elsize))
        n = opt.state_numel()
        seen["state_numel"] = n if type(n) is int else f"a {type(n).__name__}"
    # the parameters that are no longer what the model made them: another shape, dtype or device, or
    # no longer trainable (a rebound p.data must be a tensor like the one it replaces)
    moved |= {i for i, p in enumerate(params) if (p.shape, p.dtype, p.device, p.requires_grad) != kept[i]}
    seen["moved"] = sorted(moved)
    seen["state"] = state
    return seen


def _zero_rank(cls, case: ZeroCase, r: int, comm, device: str, given: dict | None = None) -> dict:
    """Rank ``r``'s run of every step; ``given``: its inputs from the judge (rank_inputs)."""
    seen = _zero_steps(cls, case, comm, device, given or rank_inputs(case, r), range(case.steps))
    del seen["state"]
    return seen


def observe_zero(
    cell,
    case: ZeroCase,
    *,
    fn_name: str = "ZeroAdam",
    device: str = "cpu",
    guard_s: float = 20.0,
    fresh_steps: bool = False,
) -> dict:
    """Run ``ZeroAdam`` for the case's steps on the simulated group: every rank's parameters after each
    step, its ``state_numel()``, the size of its ``state_dict()``, and every comm call it made.
    ``fresh_steps``: every step with the class from a new run of the cell and new Parameter objects
    (:func:`_zero_steps`), as the state test's fresh processes take it."""
    from ch13lib.procgroup import SimWorld

    _one_thread()
    case = _as_case(case, ZeroCase)
    _function(cell, fn_name, "a_class", f"{fn_name}(params, comm, lr, betas, eps)")
    W = case.world_size
    classes = rank_copies(cell, fn_name, W)  # each rank its own module, as a process
    fresh = [rank_copies(cell, fn_name, W) for _ in range(case.steps)] if fresh_steps else None
    seen = [None] * W
    world = SimWorld(W, policy=case.policy, seed=case.schedule_seed, guard_s=guard_s)

    def body(r, comm):
        per_step = None if fresh is None else [f[r] for f in fresh]
        seen[r] = _zero_steps(classes[r], case, comm, device, rank_inputs(case, r), range(case.steps), fresh=per_step)
        del seen[r]["state"]

    run_world(world, body, case, fn_name, p2p=True, collectives=True, all_reduce=True)
    return {
        "steps": [s["steps"] for s in seen],
        "state_numel": [s["state_numel"] for s in seen],
        "held": [s["held"] for s in seen],
        "moved": [s["moved"] for s in seen],
        "calls": [[{k: v for k, v in c.items() if k != "rank"} for c in world.log if c["rank"] == r] for r in range(W)],
    }


def case_dict(case) -> dict:
    """A case as the JSON payload of a real world carries it."""
    return dataclasses.asdict(case)
