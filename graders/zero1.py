"""Hidden grader of `zero1`: ``ZeroAdam(params, comm, lr, betas, eps)`` (ZeRO stage 1).

The subject runs the answer for k steps on the simulated process group, every rank with its own
gradients, each step by a new optimizer object that continues from the last one's ``state_dict()``
(ch13lib.parallel_sim.observe_zero): it records each rank's parameters after every step,
``state_numel()`` and every comm call; then unchanged on a real gloo world (NCCL too with --gpu).
This judge computes DDP (gradients averaged over the ranks) + ``torch.optim.Adam`` itself and
compares (float64 within 1e-10, float32 within 1e-6), and checks the traffic (one
reduce_scatter_tensor and one all_gather_into_tensor of ⌈N/W⌉-element shards per step) and the
state (ch13lib.parallel_cases). The passes rest on relayed cases (each rank a subject process of
its own and this judge the broker, which keeps the call log: graders/_parallelism.py). The state
test takes every step after the first in fresh processes (:func:`observe_steps`), so what a rank
keeps between steps is what its ``state_dict()`` hands this judge, which measures it.
"""

import dataclasses

import torch
from hypothesis import strategies as st

from ch13lib.lang import Messages
from ch13lib.parallel_cases import (
    ZeroCase,
    adam_reference,
    rank_inputs,
    state_elements,
    zero_dataflow_problem,
    zero_state_problem,
    zero_traffic_problem,
    zero_verdict,
)
from graders._collectives import calls_by_rank, run_relayed
from graders._parallelism import HARNESS, a_class, graded, grid_then_search, malformed, observe, require, tensor_of
from graders._parallelism import real_process_group as _real_process_group
from graders.api import Answer, Fail, Grader

grader = Grader("zero1", timeout_s=150, harness=HARNESS)
FN = "ZeroAdam"
STEP_HARNESS = "kit.harnesses.parallel_sim:rank_zero_step"
WHAT = a_class(f"{FN}(params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)")
EXAMPLES = 20

# What this grader says itself, in the course's language (ch13lib/lang.py); the verdicts' own sentences
# are ch13lib.parallel_cases's.
M = Messages(
    moved=(
        "{case}: rank {r} 改变了参数 {which} 的 shape、dtype、device 或 requires_grad。\n"
        "模型的参数要保持这些不变; 把收集到的值放进参数里 "
        "(在 torch.no_grad() 下 p.copy_(...), 或 p.data = 一个与该参数形状和 dtype 相同的视图)。\n"
        "重现: {replay}",
        "{case}: rank {r} changed the shape, dtype, device or requires_grad of parameter {which}.\nthe model's "
        "parameters keep theirs; put the gathered values into them (p.copy_(...) under torch.no_grad(), or p.data = "
        "a view of the parameter's shape and dtype).\nReplay: {replay}",
    ),
    moved_many=(
        "{case}: rank {r} 改变了参数 {which} 的 shape、dtype、device 或 requires_grad。\n"
        "模型的参数要保持这些不变; 把收集到的值放进参数里 "
        "(在 torch.no_grad() 下 p.copy_(...), 或 p.data = 一个与该参数形状和 dtype 相同的视图)。\n"
        "重现: {replay}",
        "{case}: rank {r} changed the shape, dtype, device or requires_grad of parameters {which}.\nthe model's "
        "parameters keep theirs; put the gathered values into them (p.copy_(...) under torch.no_grad(), or p.data = "
        "a view of the parameter's shape and dtype).\nReplay: {replay}",
    ),
    lost=("{case}: rank {r} 的参数不再包含 N={N} 个值", "{case}: rank {r}'s parameters no longer hold N={N} values"),
)


@st.composite
def cases(draw, tiny: bool = False) -> ZeroCase:
    n = draw(st.integers(1, 3))
    shapes = tuple(tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))) for _ in range(n))
    return ZeroCase(
        draw(st.integers(1, 4)),
        shapes,
        draw(st.sampled_from(["float32", "float64"])),
        draw(st.integers(1, 3)),
        draw(st.sampled_from([1e-3, 1e-2, 0.1])),
        draw(st.sampled_from([(0.9, 0.999), (0.8, 0.99), (0.5, 0.9)])),
        draw(st.sampled_from([1e-8, 1e-6])),
        1e-6 if tiny else draw(st.sampled_from([1.0, 0.1])),
        draw(st.integers(0, 2**16)),
        draw(st.sampled_from(["stay", "round_robin", "random"])),
        draw(st.integers(0, 2**16)),
    )


# graded before the grid: a quick, readable failure
FIRST = ZeroCase(2, ((3,), (2,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 1)
GRID = [  # N = 18, 7, 1, 12: divisible by some W and not others; both dtypes
    ZeroCase(
        W,
        shapes,
        ["float64", "float32"][i % 2],
        3,
        1e-2,
        (0.9, 0.999),
        1e-8,
        1.0,
        400 + i,
        ["stay", "round_robin", "random"][i % 3],
        i,
    )
    for i, (W, shapes) in enumerate(
        [
            (1, ((3, 4), (4,), (2,))),
            (2, ((7,),)),
            (3, ((3, 4), (4,), (2,))),
            (4, ((7,),)),
            (3, ((1,),)),
            (4, ((2, 3), (6,))),
            (2, ((1,), (2, 2))),
            (3, ((5,), (2,))),
        ]
    )
]


# The grid's cases that also run relayed (the threads grid runs them first): W = 2, 3, 4.
RELAYED_GRID = [next(c for c in GRID if c.world_size == W) for W in (2, 3, 4)]


def _seen(answer: Answer, case: ZeroCase, *, relayed: bool = False) -> dict:
    seen = observe(answer, "observe_zero", case, relayed=relayed)
    W = case.world_size
    if not all(
        isinstance(seen.get(k), list) and len(seen[k]) == W for k in ("steps", "state_numel", "held", "calls", "moved")
    ):
        raise malformed(case)
    return seen


def check_values(answer: Answer, case: ZeroCase, *, relayed: bool = False) -> None:
    case = graded(case, relayed=relayed)  # a relayed case's values are hidden: expect those
    problem = zero_verdict(case, _seen(answer, case, relayed=relayed)["steps"], FN)
    if problem:
        raise Fail(problem)


@grader.test(4)
def matches_ddp_adam(answer: Answer) -> None:
    """After each of k steps every rank's parameters equal DDP (averaged gradients) + torch.optim.Adam
    (float64 within 1e-10, float32 within 1e-6): a grid of W = 1-4 with N not divisible by W, then
    hypothesis-generated shapes, dtypes and hyper-parameters."""
    require(answer, FN, WHAT)
    grid_then_search(answer, check_values, FIRST, GRID, cases(), EXAMPLES, RELAYED_GRID)


TINY_CASES = [
    ZeroCase(2, ((3, 4), (4,)), "float64", 3, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 501),
    ZeroCase(3, ((7,),), "float32", 3, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 502, "round_robin"),
    ZeroCase(4, ((5,), (2,)), "float64", 2, 1e-2, (0.8, 0.99), 1e-8, 1e-6, 503, "random", 4),
    ZeroCase(1, ((6,),), "float64", 3, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 504),
]


@grader.test(2)
def tiny_gradients(answer: Answer) -> None:
    """Gradients of about 1e-6, where the mean (not the sum), eps outside the square root and the bias
    correction change the update: still DDP + torch.optim.Adam."""
    require(answer, FN, WHAT)
    for case in TINY_CASES:
        check_values(answer, case, relayed=True)


# Every state case takes each step after the first in fresh processes (observe_steps), which stops
# the job's processes: these run last, after the real world (which the subject starts). The real
# world's cases are among them, so the state test reuses their runs.
STATE_CASES = [
    ZeroCase(3, ((3, 4), (4,), (2,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 601),
    ZeroCase(4, ((7,),), "float32", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 602, "random", 1),
    ZeroCase(2, ((5,), (3, 3)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 603, "round_robin"),
    ZeroCase(2, ((7,),), "float32", 2, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 604),
    ZeroCase(1, ((5,),), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 605),
    # N large enough that full moments (2·N) pass the 4·⌈N/W⌉ elements and numbers a state may carry
    ZeroCase(3, ((64, 64), (64,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 606),
]


def check_state_and_traffic(answer: Answer, case: ZeroCase) -> None:
    """Step by step on relayed worlds of fresh processes (:func:`observe_steps`): the values after every
    step, the state each rank's ``state_dict()`` carried to the next, the calls the broker logged."""
    case = graded(case, relayed=True)
    seen = observe_steps(answer, case)
    problem = (
        zero_verdict(case, seen["steps"], FN)
        or zero_state_problem(case, seen, FN)
        or zero_traffic_problem(case, seen["calls"], FN)
        or zero_dataflow_problem(case, seen["flow"], FN)
    )
    if problem:
        raise Fail(problem)
    moved = [(r, m) for r, m in enumerate(seen["moved"]) if m]
    if moved:
        r, which = moved[0]
        key = "moved_many" if len(which) > 1 else "moved"
        raise Fail(M(key, case=case.label(), r=r, which=which, replay=case.replay_both(FN)))


def observe_steps(answer: Answer, case: ZeroCase) -> dict:
    """``case`` one step at a time, each step a relayed world whose ranks are fresh processes
    (``Answer.fresh_siblings``; kit.harnesses.parallel_sim.rank_zero_step): a rank is handed the
    parameters' values, this step's gradients and the ``state_dict()`` its predecessor returned, and
    hands back the values after the step and its own ``state_dict()``. So an optimizer keeps from one
    step to the next exactly what it hands this judge, which measures it (``state_elements``), and
    the broker logs every call. Cached per answer, as :func:`graders._parallelism.observe` is."""
    cache = answer.__dict__.setdefault("_observed", {})
    key = ("steps", repr(case))
    if key not in cache:
        try:
            cache[key] = _steps(answer, case)
        except Fail as f:  # the same next time
            cache[key] = f
    seen = cache[key]
    if isinstance(seen, Fail):
        raise Fail(seen.message, picture=seen.picture)
    return seen


def _steps(answer: Answer, case: ZeroCase) -> dict:
    W = case.world_size
    given = [rank_inputs(case, r) for r in range(W)]
    now = [g["params"] for g in given]  # each rank's parameters' values
    ref = adam_reference(case)  # DDP + Adam after each step
    states: list = [None] * W
    elsize = torch.empty(0, dtype=getattr(torch, case.dtype)).element_size()
    seen = {"steps": [[] for _ in range(W)], "state_numel": [0] * W, "held": [0] * W, "moved": [[] for _ in range(W)]}
    seen.update(calls=[[] for _ in range(W)], flow=[])
    bad = malformed(case)
    for s in range(case.steps):
        # the first step needs no state, so ranks that ran earlier requests may take it: every later step
        # starts in fresh processes, which hold only what the judge hands them
        answer.fresh_siblings(W) if s else answer.siblings(W)
        values, world = run_relayed(
            answer,
            STEP_HARNESS,
            case,
            W,
            {"fn_name": FN},
            fn_name=FN,
            shown=dataclasses.replace(case, seed=0, key=0),  # the values are each rank's own inputs alone
            inputs=lambda r, s=s: {"params": now[r], "grads": [given[r]["grads"][s]], "state": states[r]},
            record_flow=True,
            collectives=True,
            all_reduce=True,
        )
        for r, v in enumerate(values):
            after = v.get("steps") if type(v) is dict else None
            if not (type(after) is list and len(after) == 1 and isinstance(after[0], torch.Tensor)):
                raise bad
            if after[0].numel() != case.numel:
                raise Fail(M("lost", case=case.label(), r=r, N=case.numel))
            seen["steps"][r].append(after[0])
            # the next step starts from this judge's values, not the rank's: a rank's own values (within
            # the tolerance of them) could carry state in their low bits
            parts = ref[s].to(getattr(torch, case.dtype)).split([p.numel() for p in now[r]])
            now[r] = [t.reshape(p.shape).clone() for t, p in zip(parts, now[r])]
            states[r] = v.get("state")
            seen["held"][r] = max(seen["held"][r], state_elements(states[r], elsize))
            seen["state_numel"][r] = v.get("state_numel")
            seen["moved"][r] = sorted(set(seen["moved"][r]) | set(v.get("moved") or []))
        for r, calls in enumerate(calls_by_rank(world)):
            seen["calls"][r].extend(calls)
        seen["flow"].extend(world.flow or [])
    return seen


def check_before_real(answer: Answer, case: ZeroCase) -> None:
    """The simulator's verdict on a real world's case, in one relayed world: the values and the calls
    (the state is the state test's)."""
    check_values(answer, case, relayed=True)
    case = graded(case, relayed=True)
    seen = _seen(answer, case, relayed=True)
    problem = zero_traffic_problem(case, seen["calls"], FN) or zero_dataflow_problem(case, seen.get("flow", []), FN)
    if problem:
        raise Fail(problem)


REAL_CASES = [STATE_CASES[0], STATE_CASES[3], STATE_CASES[4], STATE_CASES[5]]  # world sizes 3, 2, 1, 3


def judge_real(case: ZeroCase, per_rank: list) -> str | None:
    steps = [[tensor_of(s, case.dtype) for s in r.get("steps")] for r in per_rank]
    seen = {"state_numel": [r.get("state_numel") for r in per_rank], "held": [r.get("held") for r in per_rank]}
    return (
        zero_verdict(case, steps, FN)
        or zero_state_problem(case, seen, FN)
        or zero_traffic_problem(case, [r.get("calls") or [] for r in per_rank], FN)
    )


@grader.test(2)
def real_process_group(answer: Answer) -> None:
    """The same class on a real gloo world (sub-groups of 1-3 processes), NCCL on GPU runners; its
    cases' state on fresh processes too, as the state test takes them."""
    require(answer, FN, WHAT)
    _real_process_group(answer, "zero", FN, REAL_CASES, check_before_real, judge_real)
    for case in REAL_CASES:  # after the real world: the fresh processes stop the subject that starts it
        check_state_and_traffic(answer, case)


@grader.test(2)
def sharded_state_and_traffic(answer: Answer) -> None:
    """Each step in fresh processes that get only the parameters, the step's gradients and the last
    step's state_dict(): the values still follow DDP + Adam, the state_dict() carries at most 4·⌈N/W⌉
    elements and 256 more (nothing of size N), state_numel() ≤ 2·⌈N/W⌉; per step exactly one
    reduce_scatter_tensor and one all_gather_into_tensor of ⌈N/W⌉-element shards; the model's
    parameters keep their shape, dtype and device."""
    require(answer, FN, WHAT)
    for case in STATE_CASES:
        check_state_and_traffic(answer, case)
