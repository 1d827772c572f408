"""Hidden grader of `pipeline`: ``gpipe_step(stage, batch, target, n_micro, comm, loss_fn)`` (GPipe).

The subject runs the answer on the simulated process group, one rank per stage, with each stage
wrapped so that its forward and its backward cost one tick of the group's logical clock per
micro-batch's worth of rows (ch13lib.parallel_sim.observe_pipeline), and sends back every rank's
.grad, return value and the schedule; then unchanged on a real gloo world (NCCL too with --gpu).
The passes rest on relayed cases (each stage a subject process of its own and this judge the
broker, which keeps the clock: graders/_parallelism.py): a grid case per P = 2-4, the schedule
cases and the edge cases.
This judge computes the single-process full-batch step of the whole model itself and compares
(ch13lib.parallel_cases.pipeline_verdict); the schedule must be no longer than GPipe's 2(m+P-1).
"""

from hypothesis import strategies as st

from ch13lib.parallel_cases import PipeCase, pipeline_reference, pipeline_verdict, schedule_problem
from graders._parallelism import HARNESS, a_function, graded, grid_then_search, observe, require, tensor_of
from graders._parallelism import real_process_group as _real_process_group
from graders.api import Answer, Fail, Grader

grader = Grader("pipeline", timeout_s=150, harness=HARNESS)
FN = "gpipe_step"
WHAT = a_function(f"{FN}(stage, batch, target, n_micro, comm, loss_fn)")
EXAMPLES = 25


@st.composite
def cases(draw) -> PipeCase:
    P = draw(st.integers(1, 4))
    return PipeCase(
        P,
        draw(st.integers(1, 5)),
        draw(st.integers(1, 3)),
        tuple(draw(st.lists(st.integers(2, 5), min_size=P + 1, max_size=P + 1))),
        draw(st.sampled_from(["mse", "cross_entropy"])),
        draw(st.integers(0, 2**16)),
        draw(st.booleans()),
        draw(st.sampled_from(["stay", "round_robin", "random"])),
        draw(st.integers(0, 2**16)),
    )


FIRST = PipeCase(2, 2, 2, (), "mse", 1)  # graded before the grid: a quick, readable failure
GRID = [  # every P = 1..4 with m below, at and above P; both losses; policies in turn
    PipeCase(
        P,
        m,
        1 + (P + m) % 3,
        (),
        ["mse", "cross_entropy"][(P * m) % 2],
        200 + 10 * P + m,
        (P + m) % 2 == 1,
        ["stay", "round_robin", "random"][(P + m) % 3],
        m,
    )
    for P in (1, 2, 3, 4)
    for m in sorted({1, max(1, P - 1), P + 1, 4})
]


# The grid's cases that also run relayed (the threads grid runs them first): P = 2, 3, 4.
RELAYED_GRID = [next(c for c in GRID if c.stages == P and c.n_micro > 1) for P in (2, 3, 4)]


def check_values(answer: Answer, case: PipeCase, *, relayed: bool = False) -> None:
    case = graded(case, relayed=relayed)  # a relayed case's values are hidden: expect those
    seen = observe(answer, "observe_pipeline", case, relayed=relayed)
    problem = pipeline_verdict(case, seen, FN)
    if problem:
        raise Fail(problem)


def check_schedule(answer: Answer, case: PipeCase) -> None:
    case = graded(case, relayed=True)
    seen = observe(answer, "observe_pipeline", case, relayed=True)
    problem = schedule_problem(case, seen, FN)
    if problem:
        raise Fail(problem, picture=_picture(case, seen, problem))


def _picture(case: PipeCase, seen: dict, problem: str) -> bytes:
    from ch13lib.pictures import pipeline

    try:
        return pipeline(seen.get("timeline") or [], case.stages, float(seen["length"]), case.bound(), problem)
    except Exception:  # noqa: BLE001 - a picture is a bonus; the chart is in the message
        return b""


@grader.test(5)
def gradients_and_loss(answer: Answer) -> None:
    """Every stage's .grad grows by one full-batch step of the whole model, and the last rank returns the
    mean loss: a grid of P = 1-4 stages, then hypothesis-generated cases (sizes, losses, schedules)."""
    require(answer, FN, WHAT)
    grid_then_search(answer, check_values, FIRST, GRID, cases(), EXAMPLES, RELAYED_GRID)


SCHEDULE_CASES = [
    PipeCase(2, 4, 1, (), "mse", 41),
    PipeCase(3, 3, 2, (2, 4, 3, 2), "mse", 42, False, "round_robin"),
    PipeCase(4, 4, 1, (), "cross_entropy", 43, False, "random", 7),
    PipeCase(4, 2, 2, (3, 2, 2, 2, 3), "mse", 44),
    PipeCase(2, 5, 3, (), "mse", 45, True, "random", 2),
    PipeCase(1, 3, 2, (), "mse", 46),
]


@grader.test(3)
def gpipe_schedule(answer: Answer) -> None:
    """On the logical clock (one tick per micro-batch's worth of rows a stage processes forward or
    backward; a receive no earlier than its send) the step takes at most GPipe's 2(m + P − 1) ticks."""
    require(answer, FN, WHAT)
    for case in SCHEDULE_CASES:
        check_schedule(answer, case)


EDGE_CASES = [  # one stage (no messages at all), one micro-batch, one row, .grad already holding something
    PipeCase(1, 1, 1, (4, 2), "mse", 51),
    PipeCase(1, 4, 2, (3, 5), "cross_entropy", 52, True),
    PipeCase(3, 1, 1, (2, 3, 3, 2), "mse", 53, True, "round_robin"),
    PipeCase(2, 1, 4, (5, 2, 4), "cross_entropy", 54, False, "random", 5),
    PipeCase(4, 3, 1, (2, 2, 2, 2, 2), "mse", 55, True, "random", 11),
]


@grader.test(2)
def one_stage_and_accumulation(answer: Answer) -> None:
    """P = 1 (no messages), a single micro-batch or row, and .grad that already holds something
    (gradients accumulate on top of it: nothing is zeroed)."""
    require(answer, FN, WHAT)
    for case in EDGE_CASES:
        check_values(answer, case, relayed=True)


REAL_CASES = [
    PipeCase(3, 2, 2, (3, 4, 2, 3), "mse", 61),
    PipeCase(2, 3, 1, (2, 3, 4), "cross_entropy", 62, True),
    PipeCase(1, 2, 2, (3, 2), "mse", 63),
]


def judge_real(case: PipeCase, per_rank: list) -> str | None:
    seen = {
        "returns": [r.get("returned") for r in per_rank],
        "grads": [[None if g is None else tensor_of(g, "float64") for g in r.get("grads")] for r in per_rank],
    }
    return pipeline_verdict(case, seen, FN, pipeline_reference(case))


@grader.test(2)
def real_process_group(answer: Answer) -> None:
    """The same function on a real gloo world (sub-groups of 1-3 processes), NCCL on GPU runners."""
    require(answer, FN, WHAT)
    _real_process_group(answer, "pipeline", FN, REAL_CASES, check_before_real, judge_real)


def check_before_real(answer: Answer, case: PipeCase) -> None:
    check_values(answer, case, relayed=True)
