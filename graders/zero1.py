"""Hidden grader of `zero1`: ``ZeroAdam(params, comm, lr, betas, eps)`` (ZeRO stage 1).

The subject runs the answer for k steps on the simulated process group, every rank with its own
gradients (ch13lib.parallel_sim.observe_zero): it records each rank's parameters after every step,
``state_numel()``, the elements the optimizer object holds, and every comm call; then unchanged on
a real gloo world (NCCL too with --gpu). This judge computes DDP (gradients averaged over the ranks)
+ ``torch.optim.Adam`` itself and compares (float64 within 1e-10, float32 within 1e-6), and checks
the state (at most 2·⌈N/W⌉) and the traffic (one reduce_scatter_tensor and one
all_gather_into_tensor of ⌈N/W⌉-element shards per step) (ch13lib.parallel_cases).
The passes rest on relayed cases (each rank a subject process of its own and this judge the broker,
which keeps the call log: graders/_parallelism.py): a grid case per W = 2-4, the tiny-gradient
cases, and every state and traffic check.
"""

from hypothesis import strategies as st

from ch13lib.parallel_cases import (
    ZeroCase,
    zero_dataflow_problem,
    zero_state_problem,
    zero_traffic_problem,
    zero_verdict,
)
from graders._parallelism import HARNESS, graded, grid_then_search, observe, require, tensor_of
from graders._parallelism import real_process_group as _real_process_group
from graders.api import Answer, Fail, Grader

grader = Grader("zero1", timeout_s=150, harness=HARNESS)
FN = "ZeroAdam"
WHAT = f"a class `{FN}(params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)`"
EXAMPLES = 20


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
        raise Fail(f"{case.label()}: the run's report came back malformed (the harness was interfered with?)")
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


STATE_CASES = [
    ZeroCase(3, ((3, 4), (4,), (2,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 601),
    ZeroCase(4, ((7,),), "float32", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 602, "random", 1),
    ZeroCase(2, ((5,), (3, 3)), "float64", 3, 1e-2, (0.9, 0.999), 1e-8, 1.0, 603, "round_robin"),
    ZeroCase(1, ((4,),), "float64", 1, 1e-2, (0.9, 0.999), 1e-8, 1.0, 604),
    # N large enough that full moments pass PY_SCALARS_ALLOWANCE (parallel_sim): state kept as text or
    # as an int's digits or Python floats, which the small cases' names would hide
    ZeroCase(4, ((64, 64), (64,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 605),
]


@grader.test(2)
def sharded_state_and_traffic(answer: Answer) -> None:
    """state_numel() ≤ 2·⌈N/W⌉ and nothing of size N kept between steps besides the parameters
    themselves (a flat buffer they view is theirs); per step exactly one reduce_scatter_tensor and
    one all_gather_into_tensor of ⌈N/W⌉-element shards; the model's parameters keep their shape,
    dtype and device."""
    require(answer, FN, WHAT)
    for case in STATE_CASES:
        check_state_and_traffic(answer, case)


def check_state_and_traffic(answer: Answer, case: ZeroCase) -> None:
    """On a relayed world (with more than one rank), where the broker keeps the call log: a threads
    world's log is in the cell's reach, as is what a real world's ranks report of their calls."""
    case = graded(case, relayed=True)
    seen = _seen(answer, case, relayed=True)
    problem = (
        zero_state_problem(case, seen, FN)
        or zero_traffic_problem(case, seen["calls"], FN)
        or zero_dataflow_problem(case, seen.get("flow", []), FN)
    )
    if problem:
        raise Fail(problem)
    moved = [(r, m) for r, m in enumerate(seen["moved"]) if m]
    if moved:
        r, which = moved[0]
        raise Fail(
            f"{case.label()}: rank {r} changed the shape, dtype, device or requires_grad of "
            f"parameter{'s' if len(which) > 1 else ''} {which}: the model's parameters keep theirs; put "
            f"the gathered values into them (p.copy_(...) under torch.no_grad(), or p.data = a view of "
            f"the parameter's shape and dtype). Replay: {case.replay(FN)}"
        )


def check_before_real(answer: Answer, case: ZeroCase) -> None:
    """The simulator's verdict on a real world's case, relayed: the values, the state and the calls."""
    check_values(answer, case, relayed=True)
    check_state_and_traffic(answer, case)


REAL_CASES = [
    ZeroCase(3, ((3, 4), (4,), (2,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 701),
    ZeroCase(2, ((7,),), "float32", 2, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 702),
    ZeroCase(1, ((5,),), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 703),
    ZeroCase(3, ((64, 64), (64,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 704),  # (see STATE_CASES' last)
]


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
    """The same class on a real gloo world (sub-groups of 1-3 processes), NCCL on GPU runners."""
    require(answer, FN, WHAT)
    _real_process_group(answer, "zero", FN, REAL_CASES, check_before_real, judge_real)
