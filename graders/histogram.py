"""Hidden grader of `histogram` (notebook 02): counting with cuda.atomic.add.

The kernel runs on the checking simulator of ch13lib.cuda_sim, which records who wrote each element
of ``bins``. A plain ``bins[v] += 1`` is a read-modify-write: when a second thread of the same launch
updates an element that another thread already read-modified-wrote, the simulator reports the lost
update by name, whatever order it ran the threads in (on a GPU the two reads may see the same old
count and one increment vanishes; the simulator's sequential run would hide that in the result, so
it is judged from the access record, not the counts). A plain store mixed with atomics on one
element is reported too. Inputs are uneven (many threads per bin), sizes straddle the block, and a
second call on the same data must count from zero. As in graders/vec_add.py, the cell runs in the
grading subject, which sends back observations (ch13lib.cuda_check's ``subject_*``) that the checks
judge here against numpy's bincount of inputs made here. On a GPU runner the counts are checked on
real CUDA too.
"""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ch13lib import cuda_check as cc
from graders.api import Answer, Grader
from graders.vec_add import around_the_block, check_cases, failing_case, required_kernel

grader = Grader("histogram", timeout_s=180, harness=("kit.harnesses.cuda_check",))

TPBS = [1, 2, 7, 32, 64, 100, 128, 256, 1024]
BINS = [1, 2, 3, 7, 16, 64, 200, 256]  # the notebook promises n_bins <= 256
MAX_THREADS = 2100


@st.composite
def hist_case(draw):
    """(n, n_bins, threads_per_block) with n at the edges of the block size."""
    n, tpb = around_the_block(draw, TPBS, MAX_THREADS)
    return n, draw(st.sampled_from(BINS)), tpb


def _required(answer: Answer):
    return required_kernel(answer, "histogram", "histogram_kernel", "launch_histogram")


def _case(answer: Answer, ask, n, n_bins, tpb, **kw):
    with failing_case(f"n={n}, n_bins={n_bins}, threads_per_block={tpb}"):
        cc.check_histogram(ask, n, n_bins, tpb, answer.device, **kw)
        if answer.gpu:  # the access record (lost updates) exists only on the simulator
            cc.check_histogram(ask, n, n_bins, tpb, "cpu", **kw)


@grader.test(2)
def no_lost_updates(answer: Answer):
    """Many threads per bin: every update of a shared count is an atomic read-modify-write."""
    ask = _required(answer)
    for n, n_bins, tpb in [(64, 1, 32), (500, 3, 128), (300, 7, 64)]:
        _case(answer, ask, n, n_bins, tpb)


@grader.test(4)
def counts_match_numpy(answer: Answer):
    """The counts equal np.bincount(data, minlength=n_bins) for sizes around the block; a NEW int32
    array; data unchanged; blocks of threads_per_block threads."""
    ask = _required(answer)

    @settings(max_examples=20)
    @given(hist_case())
    @example((257, 16, 256))
    @example((1, 1, 1))
    @example((1000, 256, 1024))
    @example((33, 200, 32))
    def prop(case):
        n, n_bins, tpb = case
        cc.check_histogram(ask, n, n_bins, tpb, answer.device)

    check_cases(prop)


@grader.test(2)
def edge_cases(answer: Answer):
    """No data (no launch, zeros); the default of 256 threads per block; every call counts from zero."""
    ask = _required(answer)
    _case(answer, ask, 0, 4, 32)
    _case(answer, ask, 600, 10, None)
    _case(answer, ask, 90, 5, 16, calls=3)
