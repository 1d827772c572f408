"""Hidden grader of `vec_add_grid_stride` (notebook 02): vecAdd with a grid-stride loop.

The caller chooses the grid (``blocks`` x ``threads_per_block``), which may be smaller or larger
than n: every thread starts at its global index and steps by the total number of threads in the
grid. Cases are drawn around the grid size (n = 0, 1, T - 1, T, T + 1, 3T + 2 and odd sizes, T the
number of threads); all run on the checking simulator of ch13lib.cuda_sim, and on real CUDA too on a
GPU (``answer.gpu``). As in graders/vec_add.py, the cell runs in the grading subject, which
sends back observations (ch13lib.cuda_check's ``subject_*``) that the checks judge here.
"""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ch13lib import cuda_check as cc
from graders.api import Answer, Grader
from graders.vec_add import check_cases, compiled

grader = Grader("vec_add_grid_stride", timeout_s=180, harness=("kit.harnesses.cuda_check",))

TPBS = [1, 2, 3, 7, 32, 64, 100, 128, 256, 1024]
BLOCKS = [1, 2, 3, 5, 8]
DTYPES = ["float32", "float64", "int32", "int64"]
MAX_THREADS = 2100
MAX_N = 4000
NAMES = dict(kernel_name="vec_add_grid_stride", launcher="launch_vec_add_grid_stride")


@st.composite
def stride_case(draw):
    """(n, blocks, threads_per_block, dtype): n below, at and above the number of threads."""
    tpb = draw(st.sampled_from(TPBS))
    blocks = draw(st.sampled_from([b for b in BLOCKS if b * tpb <= MAX_THREADS]))
    total = blocks * tpb
    kind = draw(st.sampled_from(["3T+2", "odd", "T+1", "T-1", "T", "one", "zero"]))
    n = {"zero": 0, "one": 1, "T-1": total - 1, "T": total, "T+1": total + 1, "3T+2": 3 * total + 2}.get(kind)
    if n is None:
        n = draw(st.integers(0, MAX_N // 2 - 1)) * 2 + 1
    return min(n, MAX_N), blocks, tpb, draw(st.sampled_from(DTYPES))


def _required(answer: Answer, *names):
    """The cell's ``ask`` (cuda_check's observations, run in the subject) once the names exist."""
    answer.require(
        *names,
        need_callable=False,
        needs="`vec_add_grid_stride(a, b, c, n)`, `launch_vec_add_grid_stride(a, b, blocks, threads_per_block)`",
    )
    return compiled(answer)


@grader.test(1)
def launch_config(answer: Answer):
    """The launcher launches the kernel once, with exactly the blocks and threads it was given."""
    ask = _required(answer, "launch_vec_add_grid_stride")

    @settings(max_examples=25)
    @given(stride_case())
    @example((50, 2, 8, "float32"))
    @example((5, 3, 8, "int32"))
    def prop(case):
        n, blocks, tpb, dtype = case
        cc.check_vec_add_launch(ask, n, tpb, dtype, blocks=blocks, **NAMES)

    check_cases(prop)


@grader.test(2)
def matches_numpy(answer: Answer):
    """c == a + b for grids smaller and larger than n; no faults; inputs unchanged; a new array."""
    ask = _required(answer, "launch_vec_add_grid_stride")

    @settings(max_examples=25)
    @given(stride_case())
    @example((50, 2, 8, "float32"))
    @example((1000, 1, 1, "int64"))
    @example((5, 3, 8, "float64"))
    @example((0, 2, 32, "float32"))
    def prop(case):
        n, blocks, tpb, dtype = case
        cc.check_vec_add_results(ask, n, tpb, dtype, answer.device, blocks=blocks, **NAMES)

    check_cases(prop)


@grader.test(1)
def kernel_bounds(answer: Answer):
    """The kernel alone, on buffers longer than n: nothing at index >= n is read or written."""
    ask = _required(answer, "vec_add_grid_stride")

    @settings(max_examples=20)
    @given(stride_case(), st.integers(1, 40))
    @example((50, 2, 8, "float32"), 5)
    def prop(case, extra):
        n, blocks, tpb, dtype = case
        cc.check_vec_add_kernel(ask, n, tpb, extra, dtype, "cpu", blocks=blocks, kernel_name="vec_add_grid_stride")
        if answer.gpu:
            cc.check_vec_add_kernel(ask, n, tpb, extra, dtype, "gpu", blocks=blocks, kernel_name="vec_add_grid_stride")

    check_cases(prop)


@grader.test(1)
def grid_stride_pattern(answer: Answer):
    """Element i is computed by global thread i % (blocks * threads_per_block) (coalesced accesses)."""
    ask = _required(answer, "launch_vec_add_grid_stride")

    @settings(max_examples=10)
    @given(stride_case().filter(lambda c: c[0] > 0))
    @example((50, 2, 8, "float32"))
    def prop(case):
        n, blocks, tpb, dtype = case
        cc.check_grid_stride_pattern(ask, n, blocks, tpb, dtype, **NAMES)

    check_cases(prop)
