"""Hidden grader of `all_reduce`: ``ring_all_reduce(tensor, comm)`` from point-to-point messages.

The subject runs the answer on the deterministic simulated process group (ch13lib.procgroup:
rendezvous sends, traffic counted per rank, deadlocks reported at once), its ranks threads for the
grid and hypothesis; then each test's relayed cases: each rank a subject process of its own
(kit/subject.py) and this judge the world's broker, which relays every message and counts the
traffic itself, so ranks can move data only as messages it sees (graders/_collectives.py). Then
the answer runs unchanged on a real gloo world of processes the subject starts as torchrun starts
them (and NCCL when graded with ``--gpu``), which sends back every rank's tensor; this judge
regenerates the inputs and decides (graders/_collectives.py).
"""

from hypothesis import given, settings

from ch13lib.collective_cases import Case
from graders._collectives import HARNESS, cases, grid, relayed_grid, require, sim_check, smoke
from graders._collectives import real_process_group as _real_process_group
from graders.api import Answer, Grader, check_property

grader = Grader("all_reduce", timeout_s=150, harness=HARNESS)
FN = "ring_all_reduce"
EXAMPLES = 60  # hypothesis examples on the simulator (a budget in examples, not seconds)


@grader.test(6)
def sums_on_simulator(answer: Answer) -> None:
    """Every rank holds the elementwise sum: hypothesis over world sizes 1-8, shapes, dtypes, schedules."""
    require(answer, FN)
    smoke(answer, fn_name=FN)
    for case in grid():
        sim_check(answer, case, fn_name=FN)

    @settings(max_examples=EXAMPLES)
    @given(case=cases())
    def prop(case):
        sim_check(answer, case, fn_name=FN)

    check_property(prop)
    for case in relayed_grid():  # what the pass rests on: ranks that share no memory
        sim_check(answer, case, fn_name=FN, relayed=True)


EDGE_CASES = [  # world size 1, and fewer elements than ranks (or an uneven split), under each policy
    Case(1, (5,), "float32", 11),
    Case(1, (), "int64", 12),
    Case(1, (2, 3), "float64", 13),
    Case(8, (), "float32", 14, "round_robin"),
    Case(4, (3,), "int64", 15, "random", 3),
    Case(3, (2,), "float64", 16, "stay"),
    Case(5, (1, 1), "float32", 17, "random", 9),
    Case(4, (5,), "float32", 18, "round_robin"),
    Case(8, (9,), "int64", 19, "random", 4),
    Case(6, (2, 2), "float64", 20, "stay"),
]


@grader.test(2)
def world_size_1_and_tiny_tensors(answer: Answer) -> None:
    """World size 1, and tensors with fewer elements than ranks or an uneven split."""
    require(answer, FN)
    for case in EDGE_CASES:
        sim_check(answer, case, fn_name=FN, relayed=case.world_size > 1)


BANDWIDTH_CASES = [
    Case(3, (12,), "float32", 21),
    Case(4, (100,), "float64", 22, "round_robin"),
    Case(5, (4, 8), "int64", 23, "random", 5),
    Case(8, (7,), "float32", 24),
    Case(8, (64,), "float32", 25, "random", 6),
]


@grader.test(3)
def bandwidth(answer: Answer) -> None:
    """No rank sends more than 2·(W−1)·⌈numel/W⌉ elements, as a ring does (contract §4)."""
    require(answer, FN)
    for case in BANDWIDTH_CASES:
        sim_check(answer, case, fn_name=FN, bandwidth=True)


@grader.test(4)
def real_process_group(answer: Answer) -> None:
    """The same function on real torch.distributed worlds: gloo processes (and NCCL on GPU runners)."""
    require(answer, FN)
    _real_process_group(answer, FN, "p2p")
