"""Hidden grader of `all_reduce`: ``ring_all_reduce(tensor, comm)`` from point-to-point messages.

Runs the answer on the deterministic simulated process group (ch13lib.procgroup: ranks as threads,
rendezvous sends, traffic counted per rank, deadlocks reported at once), then unchanged on a real
gloo world of processes started as torchrun starts them (and NCCL when graded with ``--gpu``).
"""
import dataclasses
import os

import torch
from hypothesis import given, settings, strategies as st

from ch13lib.collective_cases import (Case, SimFailure, make_inputs, run_on_sim, traffic_problem, verdict)
from ch13lib.collective_launch import launch
from graders.api import Answer, Fail, Grader, check_property

grader = Grader("all_reduce", timeout_s=150)
FN = "ring_all_reduce"
EXAMPLES = 60          # hypothesis examples on the simulator (a budget in examples, not seconds)

torch.set_num_threads(1)


@st.composite
def cases(draw, *, max_world: int = 8) -> Case:
    world = draw(st.integers(1, max_world))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    return Case(world, shape, draw(st.sampled_from(["float32", "float64", "int64"])),
                draw(st.integers(0, 2 ** 16)), draw(st.sampled_from(["stay", "round_robin", "random"])),
                draw(st.integers(0, 2 ** 16)))


def grid() -> list[Case]:
    """A fixed grid before hypothesis: every world size 1-8 with n = 1, W-1, W, W+1, 2W+3, 37 elements
    (even and uneven splits, fewer elements than ranks), dtypes and policies taken in turn."""
    out, k = [], 0
    shapes = lambda w: [(1,), (max(w - 1, 1),), (w,), (w + 1,), (2 * w + 3,), (37,)]
    for w in range(1, 9):
        for shape in dict.fromkeys(shapes(w)):
            out.append(Case(w, shape, ["float32", "float64", "int64"][k % 3], 100 + k,
                            ["stay", "round_robin", "random"][k % 3], k))
            k += 1
    return out


def _function(answer: Answer):
    module = answer.module
    fn = getattr(module, FN, None)
    if not callable(fn):
        raise Fail(f"the cell does not define a function `{FN}(tensor, comm)`")
    return fn


def sim_check(fn, case: Case, *, device: str = "cpu", api: str = "p2p", fn_name: str = FN, bandwidth=False):
    """Fail unless the answer gives the right sums (and, if asked, a ring's traffic) on ``case``."""
    try:
        inputs, outputs, world = run_on_sim(fn, case, api=api, device=device, fn_name=fn_name)
    except SimFailure as e:
        raise Fail(str(e)) from None
    problem = verdict(case, inputs, outputs, fn_name)
    if problem:
        raise Fail(problem)
    if bandwidth:
        problem = traffic_problem(case, world, fn_name)
        if problem:
            raise Fail(problem)


def smoke(fn, api: str = "p2p", fn_name: str = FN) -> None:
    """A first small case outside hypothesis, so an untouched stub reads "not implemented yet"."""
    sim_check(fn, Case(2, (4,), "float32", 1), api=api, fn_name=fn_name)


@grader.test(6)
def sums_on_simulator(answer: Answer) -> None:
    """Every rank holds the elementwise sum: hypothesis over world sizes 1-8, shapes, dtypes, schedules."""
    fn = _function(answer)
    smoke(fn)
    for case in grid():
        sim_check(fn, case)

    @settings(max_examples=EXAMPLES)
    @given(case=cases())
    def prop(case):
        sim_check(fn, case)

    check_property(prop)


EDGE_CASES = [   # world size 1, and fewer elements than ranks (or an uneven split), under each policy
    Case(1, (5,), "float32", 11), Case(1, (), "int64", 12), Case(1, (2, 3), "float64", 13),
    Case(8, (), "float32", 14, "round_robin"), Case(4, (3,), "int64", 15, "random", 3),
    Case(3, (2,), "float64", 16, "stay"), Case(5, (1, 1), "float32", 17, "random", 9),
    Case(4, (5,), "float32", 18, "round_robin"), Case(8, (9,), "int64", 19, "random", 4),
    Case(6, (2, 2), "float64", 20, "stay"),
]


@grader.test(2)
def world_size_1_and_tiny_tensors(answer: Answer) -> None:
    """World size 1, and tensors with fewer elements than ranks or an uneven split."""
    fn = _function(answer)
    for case in EDGE_CASES:
        sim_check(fn, case)


BANDWIDTH_CASES = [Case(3, (12,), "float32", 21), Case(4, (100,), "float64", 22, "round_robin"),
                   Case(5, (4, 8), "int64", 23, "random", 5), Case(8, (7,), "float32", 24),
                   Case(8, (64,), "float32", 25, "random", 6)]


@grader.test(3)
def bandwidth(answer: Answer) -> None:
    """No rank sends more than 2·(W−1)·⌈numel/W⌉ elements, as a ring does (contract §4)."""
    fn = _function(answer)
    for case in BANDWIDTH_CASES:
        sim_check(fn, case, bandwidth=True)


REAL_WORLD = 3          # processes; the cases use sub-groups of 1, 2 and 3 of them
REAL_CASES = [Case(3, (2, 5), "float32", 31), Case(2, (7,), "int64", 32), Case(3, (2,), "float64", 33),
              Case(1, (3,), "float32", 34), Case(3, (4, 3), "int64", 35)]


def real_check(source: str, grade_id: str, fn_name: str, cases: list[Case], *, backend: str, world: int,
               device: str, api: str) -> None:
    results = launch(world, "ch13lib.collective_cases:run_real_cases",
                     {"source": source, "name": grade_id, "function": fn_name, "device": device, "api": api,
                      "cases": [dataclasses.asdict(c) for c in cases]}, backend=backend)
    where = (f"on a real {backend} process group ({world} processes started as torchrun starts them; "
             f"case worlds are sub-groups of them)")
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        raise Fail(f"{where}: {errors[0]}")
    for i, case in enumerate(cases):
        per_rank = [results[r]["cases"][i] if i < len(results[r]["cases"]) else None
                    for r in range(case.world_size)]
        crashed = [(r, c["error"]) for r, c in enumerate(per_rank) if c and "error" in c]
        if crashed:
            r, why = crashed[0]
            hint = ""
            if "timed out" in why.lower() or "timeout" in why.lower() or "connection" in why.lower():
                hint = ("\n(a timeout means the ranks waited on each other forever: a deadlock, or a send "
                        "with no matching recv)")
            raise Fail(f"{where}, {case.label()}: rank {r} failed:\n{why}{hint}")
        if any(c is None for c in per_rank):
            raise Fail(f"{where}, {case.label()}: a rank stopped before this case")
        problem = verdict(case, make_inputs(case), [c["output"] for c in per_rank], fn_name)
        if problem:
            raise Fail(f"{where}: {problem.split('. Replay:')[0]}")


@grader.test(4)
def real_process_group(answer: Answer) -> None:
    """The same function on real torch.distributed worlds: gloo processes (and NCCL on GPU runners)."""
    fn = _function(answer)
    # The same cases on the simulator first: a deadlock there is a deadlock on gloo too, where a
    # blocked recv never times out; report it from the simulator instead of hanging a world.
    for case in [Case(2, (4,), "float32", 1)] + REAL_CASES:
        try:
            sim_check(fn, case)
        except Fail as f:
            raise Fail("not run on a real process group: the same case fails on the simulator, and would "
                       "fail (or hang) there too. " + f.message) from None
    real_check(answer.source, grader.grade_id, FN, REAL_CASES, backend="gloo", world=REAL_WORLD,
               device="cpu", api="p2p")
    if os.environ.get("CH13_DEVICE") == "gpu" and torch.cuda.is_available():
        gpu_check(answer, fn, FN, "p2p")


def gpu_check(answer: Answer, fn, fn_name: str, api: str) -> None:
    """NCCL across the GPUs there are (one rank per GPU, at most 4), and the simulator on CUDA tensors."""
    n = min(torch.cuda.device_count(), 4)
    cases = [c for c in REAL_CASES if c.world_size <= n] or [Case(1, (3,), "float32", 34)]
    if n == 1:
        cases = [Case(1, (3,), "float32", 34), Case(1, (2, 5), "int64", 36)]
    real_check(answer.source, answer.grade_id, fn_name, cases, backend="nccl", world=n, device="cuda", api=api)
    for case in [Case(3, (2, 5), "float32", 41, "random", 1), Case(4, (3,), "float64", 42),
                 Case(2, (8,), "int64", 43, "round_robin")]:
        sim_check(fn, case, device="cuda", api=api, fn_name=fn_name)
