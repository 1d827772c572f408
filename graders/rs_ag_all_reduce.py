"""Hidden grader of `rs_ag_all_reduce`: an all-reduce made of reduce-scatter then all-gather.

``rs_ag_all_reduce(tensor, comm)`` may use only ``comm.reduce_scatter_tensor`` and
``comm.all_gather_into_tensor`` (torch.distributed's names and argument order). Graded on the
simulated process group (sums for hypothesis-generated cases, a ring's traffic) and unchanged on a
real gloo world (NCCL too with ``--gpu``).
"""
import os

import torch
from hypothesis import given, settings

from ch13lib.collective_cases import Case
from graders.all_reduce import REAL_CASES, REAL_WORLD, cases, gpu_check, grid, real_check, sim_check
from graders.api import Answer, Fail, Grader, check_property

grader = Grader("rs_ag_all_reduce", timeout_s=120)
FN = "rs_ag_all_reduce"
API = "collectives"
EXAMPLES = 40


def _function(answer: Answer):
    fn = getattr(answer.module, FN, None)
    if not callable(fn):
        raise Fail(f"the cell does not define a function `{FN}(tensor, comm)`")
    return fn


@grader.test(2)
def sums_on_simulator(answer: Answer) -> None:
    """Every rank holds the sum: a fixed grid of world sizes 1-8 and sizes, then hypothesis-generated cases."""
    fn = _function(answer)
    sim_check(fn, Case(2, (4,), "float32", 1), api=API, fn_name=FN)
    for case in grid():
        sim_check(fn, case, api=API, fn_name=FN)

    @settings(max_examples=EXAMPLES)
    @given(case=cases())
    def prop(case):
        sim_check(fn, case, api=API, fn_name=FN)

    check_property(prop)


@grader.test(1)
def bandwidth(answer: Answer) -> None:
    """One reduce-scatter and one all-gather of ⌈n/W⌉-element shards: a ring's traffic, no more."""
    fn = _function(answer)
    for case in [Case(4, (10,), "float32", 51), Case(3, (3, 3), "int64", 52), Case(8, (5,), "float64", 53)]:
        sim_check(fn, case, api=API, fn_name=FN, bandwidth=True)


@grader.test(2)
def real_process_group(answer: Answer) -> None:
    """The same function on a real gloo world (sub-groups of 1-3 processes), NCCL on GPU runners."""
    fn = _function(answer)
    for case in [Case(2, (4,), "float32", 1)] + REAL_CASES:
        try:
            sim_check(fn, case, api=API, fn_name=FN)
        except Fail as f:
            raise Fail("not run on a real process group: the same case fails on the simulator, and would "
                       "fail (or hang) there too. " + f.message) from None
    real_check(answer.source, grader.grade_id, FN, REAL_CASES, backend="gloo", world=REAL_WORLD,
               device="cpu", api=API)
    if os.environ.get("CH13_DEVICE") == "gpu" and torch.cuda.is_available():
        gpu_check(answer, fn, FN, API)
