"""Hidden grader of `rs_ag_all_reduce`: an all-reduce made of reduce-scatter then all-gather.

``rs_ag_all_reduce(tensor, comm)`` may use only ``comm.reduce_scatter_tensor`` and
``comm.all_gather_into_tensor`` (torch.distributed's names and argument order). It runs on the
simulated process group (sums for a grid and hypothesis-generated cases on threads, then a case per
world size and a ring's traffic with each rank a subject process of its own and this judge the
world's broker, counting it), and unchanged on a real
gloo world the subject starts (NCCL too with ``--gpu``); this judge decides (graders/_collectives.py).
"""

from hypothesis import given, settings

from ch13lib.collective_cases import Case
from graders._collectives import HARNESS, cases, grid, relayed_grid, require, sim_check, smoke
from graders._collectives import real_process_group as _real_process_group
from graders.api import Answer, Grader, check_property

grader = Grader("rs_ag_all_reduce", timeout_s=120, harness=HARNESS)
FN = "rs_ag_all_reduce"
API = "collectives"
EXAMPLES = 40


@grader.test(2)
def sums_on_simulator(answer: Answer) -> None:
    """Every rank holds the sum: a fixed grid of world sizes 1-8 and sizes, then hypothesis-generated cases."""
    require(answer, FN)
    smoke(answer, api=API, fn_name=FN)
    for case in grid():
        sim_check(answer, case, api=API, fn_name=FN)

    @settings(max_examples=EXAMPLES)
    @given(case=cases())
    def prop(case):
        sim_check(answer, case, api=API, fn_name=FN)

    check_property(prop)
    for case in relayed_grid():  # what the pass rests on: ranks that share no memory
        sim_check(answer, case, api=API, fn_name=FN, relayed=True)


@grader.test(1)
def bandwidth(answer: Answer) -> None:
    """One reduce-scatter and one all-gather of ⌈n/W⌉-element shards: a ring's traffic, no more."""
    require(answer, FN)
    for case in [Case(4, (10,), "float32", 51), Case(3, (3, 3), "int64", 52), Case(8, (5,), "float64", 53)]:
        sim_check(answer, case, api=API, fn_name=FN, bandwidth=True)


@grader.test(2)
def real_process_group(answer: Answer) -> None:
    """The same function on a real gloo world (sub-groups of 1-3 processes), NCCL on GPU runners."""
    require(answer, FN)
    _real_process_group(answer, FN, API)
