"""Hidden grader of `tensor_parallel`: ``tp_mlp(x, w1, b1, w2, b2, comm)`` (Megatron's MLP).

The subject runs the answer on the simulated process group with each rank's shards
(ch13lib.parallel_sim.observe_tp), recording every comm call, then unchanged on a real gloo world
(NCCL too with --gpu). This judge computes the unsharded MLP itself and compares every rank's
output with torch.allclose's default tolerances, and the calls: exactly one all_reduce (SUM) of
y's size in x's dtype per rank when W > 1 (ch13lib.parallel_cases.tp_verdict, tp_traffic_problem).
The passes rest on relayed cases (each rank a subject process of its own and this judge the broker,
which keeps the call log: graders/_parallelism.py): a grid case per W = 2-4, the dtype cases, and
every traffic check.
"""

import math

from hypothesis import strategies as st

from ch13lib.parallel_cases import TPCase, tp_traffic_problem, tp_verdict
from graders._parallelism import HARNESS, a_function, graded, grid_then_search, malformed, observe, require, tensor_of
from graders._parallelism import real_process_group as _real_process_group
from graders.api import Answer, Fail, Grader

grader = Grader("tensor_parallel", timeout_s=120, harness=HARNESS)
FN = "tp_mlp"
WHAT = a_function(f"{FN}(x, w1, b1, w2, b2, comm)")
EXAMPLES = 30


@st.composite
def cases(draw) -> TPCase:
    W = draw(st.integers(1, 4))
    ndim = draw(st.integers(0, 3))  # x: (..., d_in), up to three leading dimensions
    return TPCase(
        W,
        tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))),
        draw(st.integers(1, 6)),
        W * draw(st.integers(1, 4)),
        draw(st.integers(1, 5)),
        draw(st.sampled_from(["float32", "float64"])),
        draw(st.integers(0, 2**16)),
        draw(st.sampled_from(["stay", "round_robin", "random"])),
        draw(st.integers(0, 2**16)),
    )


FIRST = TPCase(2, (3,), 4, 4, 3, "float32", 1)  # graded before the grid: a quick, readable failure
GRID = [
    TPCase(
        W, lead, d_in, W * k, d_out, ["float32", "float64"][i % 2], 300 + i, ["stay", "round_robin", "random"][i % 3], i
    )
    for i, (W, lead, d_in, k, d_out) in enumerate(
        [
            (1, (3,), 4, 2, 3),
            (2, (2,), 3, 2, 2),
            (2, (2, 3), 5, 1, 4),
            (3, (4,), 2, 3, 1),
            (3, (), 4, 2, 3),
            (4, (1,), 1, 1, 2),
            (4, (2, 2), 6, 2, 5),
            (2, (5,), 8, 4, 8),
            (3, (2, 1, 2), 3, 2, 2),
        ]
    )
]


# The grid's cases that also run relayed (the threads grid runs them first): W = 2, 3, 4.
RELAYED_GRID = [next(c for c in GRID if c.world_size == W) for W in (2, 3, 4)]


def _seen(answer: Answer, case: TPCase, *, relayed: bool = False) -> dict:
    """The run on ``case``; relayed, the caller judges it against ``graded(case, relayed=True)``."""
    seen = observe(answer, "observe_tp", case, relayed=relayed)
    if not (
        isinstance(seen.get("outputs"), list)
        and len(seen["outputs"]) == case.world_size
        and isinstance(seen.get("calls"), list)
        and len(seen["calls"]) == case.world_size
    ):
        raise malformed(case)
    return seen


def check_output(answer: Answer, case: TPCase, *, relayed: bool = False) -> None:
    case = graded(case, relayed=relayed)  # a relayed case's values are hidden: expect those
    problem = tp_verdict(case, _seen(answer, case, relayed=relayed)["outputs"], FN)
    if problem:
        raise Fail(problem)


def check_traffic(answer: Answer, case: TPCase) -> None:
    """The calls as the broker of a relayed world performed them (a threads world's log is in the
    cell's reach)."""
    problem = tp_traffic_problem(case, _seen(answer, case, relayed=True)["calls"], FN)
    if problem:
        raise Fail(problem)


@grader.test(3)
def matches_unsharded_mlp(answer: Answer) -> None:
    """Every rank returns gelu(x @ W1 + B1) @ W2 + b2 (torch.allclose's defaults): a grid of W = 1-4,
    then hypothesis-generated shapes, sizes, dtypes and schedules."""
    require(answer, FN, WHAT)
    grid_then_search(answer, check_output, FIRST, GRID, cases(), EXAMPLES, RELAYED_GRID)


TRAFFIC_CASES = [
    TPCase(2, (3,), 4, 6, 3, "float32", 71),
    TPCase(3, (2, 2), 3, 6, 2, "float64", 72, "round_robin"),
    TPCase(4, (5,), 2, 8, 4, "float32", 73, "random", 3),
    TPCase(1, (2,), 3, 4, 2, "float32", 74),
]


@grader.test(2)
def one_all_reduce(answer: Answer) -> None:
    """Communication: exactly one comm.all_reduce (SUM, in place) of y's size per call when W > 1 and
    nothing else (no point-to-point messages, no gathers); at W = 1 one all_reduce or none."""
    require(answer, FN, WHAT)
    for case in TRAFFIC_CASES:
        check_traffic(answer, case)


DTYPE_CASES = [
    TPCase(2, (3,), 4, 4, 3, "float64", 81),
    TPCase(3, (), 5, 9, 2, "float64", 82, "random", 1),
    TPCase(1, (2, 2), 3, 5, 4, "float64", 83),
    TPCase(1, (), 2, 3, 1, "float32", 84),
]


@grader.test(1)
def dtype_and_world_size_1(answer: Answer) -> None:
    """float64 inputs give a float64 y (and float64 traffic); world size 1 works."""
    require(answer, FN, WHAT)
    for case in DTYPE_CASES:
        check_output(answer, case)
        check_output(answer, case, relayed=True)
        check_traffic(answer, case)


REAL_CASES = [
    TPCase(3, (2, 3), 4, 6, 3, "float32", 91),
    TPCase(2, (3,), 5, 4, 2, "float64", 92),
    TPCase(1, (2,), 3, 2, 2, "float32", 93),
]


def judge_real(case: TPCase, per_rank: list) -> str | None:
    outputs = []
    for r in per_rank:
        if not isinstance(r.get("output"), list):
            outputs.append(str(r.get("output")))
            continue
        shape = tuple(r.get("shape"))
        if math.prod(shape) != len(r["output"]):
            raise ValueError("malformed")
        outputs.append(tensor_of(r["output"], str(r.get("dtype")), shape))
    return tp_verdict(case, outputs, FN) or tp_traffic_problem(case, [r.get("calls") or [] for r in per_rank], FN)


@grader.test(2)
def real_process_group(answer: Answer) -> None:
    """The same function on a real gloo world (sub-groups of 1-3 processes), NCCL on GPU runners."""
    require(answer, FN, WHAT)
    _real_process_group(answer, "tp", FN, REAL_CASES, check_before_real, judge_real)


def check_before_real(answer: Answer, case: TPCase) -> None:
    """The simulator's verdict on a real world's case, relayed: its output and its calls (what the
    real world's ranks report of their calls, and the files they share, are in the cell's reach)."""
    check_output(answer, case, relayed=True)
    check_traffic(answer, case)
