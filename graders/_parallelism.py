"""What the three graders of notebook 07 share (pipeline, tensor_parallel, zero1).

The judge never runs the answer: the subject runs it on the simulated process group
(ch13lib.parallel_sim.observe_*) or starts a real torch.distributed world for it
(ch13lib.collective_launch.launch_cell -> ch13lib.parallel_sim.run_real), and sends back plain
observations. Here the expected values are computed from the case alone (ch13lib.parallel_cases:
the full-batch step, the unsharded MLP, averaged gradients + torch.optim.Adam) and compared.

A private module (its name starts with "_"): not a grade_id of its own.
"""

from __future__ import annotations

import dataclasses

import torch

from ch13lib.collective_launch import launch_cell
from graders._collectives import flagged_by_workers
from graders.api import Answer, Fail
from kit.judge import Raised

# Imported by the subject before the cell runs (and watched by its tamper guard from then on).
HARNESS = ("ch13lib.parallel_sim", "ch13lib.parallel_cases", "ch13lib.collective_launch", "ch13lib.procgroup")
REAL_TARGET = "ch13lib.parallel_sim:run_real"
REAL_WORLD = 3  # processes; the cases use sub-groups of 1, 2 and 3 of them


def require(answer: Answer, name: str, what: str) -> None:
    """Fail unless the cell defines ``name`` as something callable (asked of the subject, not run);
    ``what``: what the contract needs, ``a function `tp_mlp(...)` ``."""
    answer.require(name, what=f"the contract needs {what}")


def observe(answer: Answer, harness: str, case, **kwargs) -> dict:
    """The subject's run of the answer on ``case`` (cached per answer: several tests share cases)."""
    cache = answer.__dict__.setdefault("_observed", {})
    key = (harness, repr(case), repr(sorted(kwargs.items())))
    if key not in cache:
        try:
            cache[key] = answer.run(f"ch13lib.parallel_sim:{harness}", case, **kwargs)
        except Raised as e:
            if e.from_harness and not e.flagged:  # a deadlock, a crash, misuse of comm (SimFailure)
                cache[key] = Fail(e.message)
            else:
                raise
    seen = cache[key]
    if isinstance(seen, Fail):
        raise Fail(seen.message)
    if not isinstance(seen, dict):
        raise Fail(f"{case.label()}: the run's report came back malformed (the harness was interfered with?)")
    return seen


def _where(backend: str, world: int) -> str:
    return (
        f"on a real {backend} process group ({world} processes started as torchrun starts them; "
        f"case worlds are sub-groups of them)"
    )


def real_world(answer: Answer, kind: str, fn_name: str, cases: list, judge, *, backend: str, world: int, device: str):
    """The answer on a real ``backend`` world, started by the subject; ``judge(case, per_rank)`` decides
    each case from the ranks' plain reports (None when right, else the problem)."""
    results = answer.run(
        launch_cell,
        world,
        REAL_TARGET,
        {"kind": kind, "function": fn_name, "device": device, "cases": [dataclasses.asdict(c) for c in cases]},
        backend=backend,
    )
    where = _where(backend, world)
    if not (isinstance(results, list) and len(results) == world and all(isinstance(r, dict) for r in results)):
        raise Fail(f"{where}: the world's report came back malformed (the harness was interfered with?)")
    flagged_by_workers(results)
    errors = [str(r["error"]) for r in results if "error" in r]
    if errors:
        if "NotImplementedError" in errors[0]:
            raise Fail("not implemented yet: the stub still raises NotImplementedError")
        raise Fail(f"{where}: {errors[0]}")
    for i, case in enumerate(cases):
        size = case.stages if kind == "pipeline" else case.world_size
        per_rank = []
        for r in range(size):
            done = results[r].get("cases")
            per_rank.append(done[i] if isinstance(done, list) and i < len(done) else None)
        crashed = [(r, str(c["error"])) for r, c in enumerate(per_rank) if isinstance(c, dict) and "error" in c]
        if crashed:
            r, why = crashed[0]
            hint = ""
            if any(k in why.lower() for k in ("timed out", "timeout", "connection")):
                hint = (
                    "\n(a timeout means the ranks waited on each other forever: a deadlock, or a send with no "
                    "matching recv)"
                )
            raise Fail(f"{where}, {case.label()}: rank {r} failed:\n{why}{hint}")
        if any(not isinstance(c, dict) for c in per_rank):
            raise Fail(f"{where}, {case.label()}: a rank stopped before this case")
        try:
            problem = judge(case, per_rank)
        except (TypeError, ValueError, RuntimeError, KeyError, IndexError):
            problem = f"{case.label()}: a rank's report came back malformed"
        if problem:
            raise Fail(f"{where}: {problem.split(' Replay:')[0]}")


def real_process_group(answer: Answer, kind: str, fn_name: str, cases: list, sim_check, judge) -> None:
    """The cases on the simulator first (a deadlock there would hang gloo), then one gloo world of
    3 processes; NCCL too on GPU runners (one rank per GPU, at most 4)."""
    for case in cases:
        try:
            sim_check(answer, case)
        except Fail as f:
            raise Fail(
                "not run on a real process group: the same case fails on the simulator, and would fail (or hang) "
                "there too. " + f.message
            ) from None
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
