"""What the three graders of notebook 07 share (pipeline, tensor_parallel, zero1).

The judge never runs the answer: the subject runs it on the simulated process group
(ch13lib.parallel_sim.observe_*) or starts a real torch.distributed world for it
(kit.harnesses.collective_launch.launch_cell -> kit.harnesses.parallel_sim.run_real), and sends back plain
observations. Here the expected values are computed from the case alone (ch13lib.parallel_cases:
the full-batch step, the unsharded MLP, averaged gradients + torch.optim.Adam) and compared.

A private module (its name starts with "_"): not a grade_id of its own.
"""

from __future__ import annotations

import dataclasses

import torch
from hypothesis import given, settings

from ch13lib.lang import Both, Messages, language
from ch13lib.parallel_cases import rank_inputs
from graders import _collectives
from graders._collectives import REAL_WORLD, calls_by_rank, run_relayed
from graders._hidden import hidden
from graders.api import Answer, Fail, check_property
from kit.judge import Raised

# What these graders say themselves, in the course's language (ch13lib/lang.py); the verdicts' own
# sentences are ch13lib.parallel_cases's.
M = Messages(
    malformed=(
        "{case}: 运行报告传回时格式有误 (测试框架被干扰了?)",
        "{case}: the run's report came back malformed (the harness was interfered with?)",
    ),
    a_function=("一个函数 `{sig}`", "a function `{sig}`"),
    a_class=("一个类 `{sig}`", "a class `{sig}`"),
    not_real=(
        "没有在真实的进程组上运行: 同一个用例在模拟器上就失败了, 在真实进程组上也会失败 (或挂起)。",
        "not run on a real process group: the same case fails on the simulator, and would fail (or hang) there too.",
    ),
)


def malformed(case) -> Fail:
    """The failure of a run whose report came back in the wrong shape."""
    return Fail(M("malformed", case=case.label()))


# Imported by the subject before the cell runs (and watched by its tamper guard from then on).
HARNESS = (
    "kit.harnesses.parallel_sim",
    "ch13lib.parallel_cases",
    "kit.harnesses.collective_launch",
    "ch13lib.procgroup",
)
REAL_TARGET = "kit.harnesses.parallel_sim:run_real"


def require(answer: Answer, name: str, what) -> None:
    """Fail unless the cell defines ``name`` as something callable (asked of the subject, not run);
    ``what``: what the contract needs, :func:`a_function` or :func:`a_class`."""
    answer.require(name, needs=what)


def a_function(signature: str) -> Both:
    """What a contract needs, in each language: ``a function `tp_mlp(...)` ``."""
    return M.both("a_function", sig=signature)


def a_class(signature: str) -> Both:
    """What a contract needs, in each language: ``a class `ZeroAdam(...)` ``."""
    return M.both("a_class", sig=signature)


# The subject's harness for each kind of run: a whole threads world, and one rank of a relayed world.
_COLLECTIVES = {"collectives": True, "all_reduce": True}  # what comm offers besides p2p (as observe_tp/_zero)
RELAYED = {  # threads harness -> (rank harness, the case's world size field, the fn_name default, comm offers)
    "observe_pipeline": ("kit.harnesses.parallel_sim:rank_pipeline", "stages", "gpipe_step", {}),
    "observe_tp": ("kit.harnesses.parallel_sim:rank_tp", "world_size", "tp_mlp", _COLLECTIVES),
    "observe_zero": ("kit.harnesses.parallel_sim:rank_zero", "world_size", "ZeroAdam", _COLLECTIVES),
}


def observe(answer: Answer, harness: str, case, *, relayed: bool = False, **kwargs) -> dict:
    """The subject's run of the answer on ``case`` (cached per answer: several tests share cases).

    On the threads world by default: each rank a thread of the subject, cheap, and what finds most
    wrong answers with their smallest example; but ranks that share a process can share memory, and
    the world's call log is in the cell's reach, so such a pass proves nothing. ``relayed`` (with
    more than one rank): each rank a subject process of its own and this judge the broker, which
    keeps the call log and the clock (graders._collectives.run_relayed). The tests' passes rest on
    relayed cases (docs/sandbox.md), whose values are hidden: drawn under a key from this judge's
    secret (graders/_hidden.py), each rank given only its own inputs. A check of a relayed case
    computes what it expects from ``hidden(case)``, as here."""
    if case.key and not relayed:
        raise ValueError(f"{case.label()}: a keyed case runs relayed only (its key never reaches the subject)")
    case = graded(case, relayed=relayed)
    relayed = bool(case.key)
    cache = answer.__dict__.setdefault("_observed", {})
    key = (harness, relayed, repr(case), repr(sorted(kwargs.items())))
    if key not in cache:
        try:
            if relayed:
                cache[key] = _observe_relayed(answer, harness, case, kwargs)
            else:
                cache[key] = answer.run(f"kit.harnesses.parallel_sim:{harness}", case, **kwargs)
        except Raised as e:
            if e.from_harness and not e.flagged:  # a deadlock, a crash, misuse of comm (SimFailure)
                cache[key] = Fail(e.message)
            else:
                raise
        except Fail as f:  # a relayed world's failure, or a rank refused something: the same next time
            if not relayed:
                raise
            cache[key] = f
    seen = cache[key]
    if isinstance(seen, Fail):
        raise Fail(seen.message, picture=seen.picture)
    if not isinstance(seen, dict):
        raise malformed(case)
    return seen


def graded(case, *, relayed: bool):
    """The case whose values a run graded ``relayed`` uses: hidden when the world has more than one
    rank (then it is relayed), else the case itself."""
    size = case.stages if hasattr(case, "stages") else case.world_size
    return hidden(case) if relayed and size > 1 else case


def grid_then_search(answer: Answer, check, first, grid, cases, examples: int, relayed_grid) -> None:
    """The course of each grader's values test: ``check(answer, case)`` on one small case first (a
    quick, readable failure), then every case of ``grid``, then ``examples`` cases drawn from the
    hypothesis strategy ``cases`` (the failing one shrunk), and last ``check(answer, case,
    relayed=True)`` on ``relayed_grid``: what the pass rests on, ranks that share no memory."""
    check(answer, first)
    for case in grid:
        check(answer, case)

    @settings(max_examples=examples)
    @given(case=cases)
    def prop(case):
        check(answer, case)

    check_property(prop)
    for case in relayed_grid:
        check(answer, case, relayed=True)


def _observe_relayed(answer: Answer, harness: str, case, kwargs: dict) -> dict:
    """``case`` on a relayed world: the ranks' own reports (rebuilt here from plain data) and what
    this judge observed as the broker, in the shape the threads harness reports it."""
    target, size_field, fn_default, offers = RELAYED[harness]
    size = getattr(case, size_field)
    values, world = run_relayed(
        answer,
        target,
        case,
        size,
        kwargs,
        fn_name=kwargs.get("fn_name", fn_default),
        p2p=True,
        shown=dataclasses.replace(case, seed=0, key=0),  # the values are each rank's own inputs alone
        inputs=lambda r: rank_inputs(case, r),
        # the schedule check reads it (dataflow_problem), and zero1's gather check (zero_dataflow_problem)
        record_flow=harness in ("observe_pipeline", "observe_zero"),
        **offers,
    )
    return relayed_report(harness, case, values, world)


def relayed_report(harness: str, case, values: list, world) -> dict:
    """The report of a relayed world's run, in the shape ``harness`` (the threads harness) reports
    it: the ranks' own values (checked by exact type) and the broker's log and clock."""
    bad = malformed(case)
    if not all(type(v) is dict for v in values):
        raise bad
    if harness == "observe_pipeline":
        grads = [v.get("grads") for v in values]
        if not all(type(g) is list and all(t is None or isinstance(t, torch.Tensor) for t in g) for g in grads):
            raise bad
        return {
            "returns": [v.get("returned") for v in values],
            "grads": grads,
            "length": float(world.length()),
            "clock": [float(c) for c in world.clock],
            "timeline": [(r, float(a), float(b), str(lab[0]), int(lab[1])) for r, a, b, lab in world.timeline],
            **({"flow": world.flow} if world.flow is not None else {}),  # observed here: the judge's own
        }
    if harness == "observe_tp":
        outputs = [v.get("output") for v in values]
        if not all(isinstance(o, torch.Tensor) or type(o) is str for o in outputs):
            raise bad
        return {"outputs": outputs, "calls": calls_by_rank(world)}
    steps = [v.get("steps") for v in values]
    if not all(type(s) is list and all(isinstance(t, torch.Tensor) for t in s) for s in steps):
        raise bad
    return {
        "steps": steps,
        "state_numel": [v.get("state_numel") for v in values],
        "held": [v.get("held") for v in values],
        "moved": [v.get("moved") for v in values],
        "calls": calls_by_rank(world),
        **({"flow": world.flow} if world.flow is not None else {}),  # observed here: the judge's own
    }


def real_world(answer: Answer, kind: str, fn_name: str, cases: list, judge, *, backend: str, world: int, device: str):
    """The answer on a real ``backend`` world, started by the subject; ``judge(case, per_rank)`` decides
    each case from the ranks' plain reports (None when right, else the problem)."""
    size = (lambda c: c.stages) if kind == "pipeline" else (lambda c: c.world_size)
    payload = {"kind": kind, "function": fn_name, "device": device}
    _collectives.real_world(answer, REAL_TARGET, payload, cases, size, judge, backend=backend, world=world)


def real_process_group(answer: Answer, kind: str, fn_name: str, cases: list, sim_check, judge) -> None:
    """The cases on the simulator first (a deadlock there would hang gloo), then one gloo world of
    3 processes; NCCL too on GPU runners (one rank per GPU, at most 4). ``sim_check`` runs each
    case relayed: the real world's ranks are processes that share the subject's files, so its pass
    must not rest on it alone (a cell could sum partial outputs through /tmp)."""
    for case in cases:
        try:
            sim_check(answer, case)
        except Fail as f:
            # the simulator's message is already in the language in force: in both languages, each on its lines
            joint = {"both": "\n", "zh": ""}.get(language(), " ")
            raise Fail(M("not_real") + joint + f.message) from None
    real_world(answer, kind, fn_name, cases, judge, backend="gloo", world=REAL_WORLD, device="cpu")
    if answer.gpu and torch.cuda.is_available():
        n = min(torch.cuda.device_count(), 4)
        size = (lambda c: c.stages) if kind == "pipeline" else (lambda c: c.world_size)
        mine = [c for c in cases if size(c) <= n]
        if mine:
            world = max(size(c) for c in mine)
            real_world(answer, kind, fn_name, mine, judge, backend="nccl", world=world, device="cuda")


def tensor_of(values, dtype: str, shape=None) -> torch.Tensor:
    """A list of numbers a real world sent back, as a tensor (ValueError when it is not one)."""
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError("not a list of numbers")
    t = torch.tensor(values, dtype=torch.float64).to(getattr(torch, dtype))
    return t.reshape(shape) if shape is not None else t
