"""Hidden grader of `vec_add` (notebook 02): the CUDA vecAdd kernel and its launcher.

Every case runs the student's kernel on the checking simulator of ch13lib.cuda_sim (strict about
out-of-bounds and negative indices, writes to the inputs, two threads writing one element and
elements nobody wrote), and compares with numpy. Sizes are drawn around the block size, where
tail bugs live: n = 0, 1, tpb - 1, tpb, tpb + 1, 2 tpb + 1 and odd sizes, threads per block from 1
to 1024, four dtypes. On a GPU runner (CH13_DEVICE=gpu) the results are checked on real CUDA too.
"""
import os

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ch13lib import cuda_check as cc
from graders.api import Answer, Fail, Grader, check_property

grader = Grader("vec_add", timeout_s=180)

GPU = os.environ.get("CH13_DEVICE") == "gpu"
DEVICE = "gpu" if GPU else "cpu"
TPBS = [1, 2, 3, 7, 32, 33, 64, 100, 128, 255, 256, 1000, 1024]
DTYPES = ["float32", "float64", "int32", "int64"]
MAX_THREADS = 3100          # simulated threads per case (about 3 us each on the checking simulator)


@st.composite
def vec_case(draw):
    """(n, threads_per_block, dtype) with n at the edges of the block size."""
    tpb = draw(st.sampled_from(TPBS))
    kind = draw(st.sampled_from(["odd", "block+1", "block-1", "block", "2block+1", "one", "zero"]))
    n = {"zero": 0, "one": 1, "block-1": tpb - 1, "block": tpb, "block+1": tpb + 1,
         "2block+1": 2 * tpb + 1}.get(kind)
    if n is None:
        n = draw(st.integers(0, max(1, (MAX_THREADS - tpb) // 2))) * 2 + 1
    n = min(n, MAX_THREADS - tpb)
    return n, tpb, draw(st.sampled_from(DTYPES))


def _required(module, *names):
    for name in names:
        if not hasattr(module, name):
            raise Fail(f"`{name}` is not defined in the vec_add cell (the contract needs "
                       f"`vec_add(a, b, c, n)` decorated with @cuda.jit and `launch_vec_add(a, b, threads_per_block=256)`)")
    return [getattr(module, name) for name in names]


@grader.test(2)
def launch_config(answer: Answer):
    """launch_vec_add launches vec_add once, with threads_per_block threads and ceil(n / tpb) blocks."""
    (launch,) = _required(answer.module, "launch_vec_add")
    try:    # the contract's default: launch_vec_add(a, b) uses 256 threads per block
        cc.check_vec_add_launch(launch, 1000, 256, default_tpb=True)
    except cc.CheckFailed as e:
        raise Fail(str(e), "n=1000, threads_per_block left at its default") from None

    @settings(max_examples=40)
    @given(vec_case())
    @example((1000, 256, "float32"))
    @example((257, 256, "float32"))
    @example((0, 256, "float32"))
    @example((1, 1, "int64"))
    def prop(case):
        n, tpb, dtype = case
        cc.check_vec_add_launch(launch, n, tpb, dtype)

    check_property(prop)


@grader.test(4)
def matches_numpy(answer: Answer):
    """c == a + b for every case; no out-of-bounds, negative-index or input writes; a NEW array."""
    (launch,) = _required(answer.module, "launch_vec_add")

    @settings(max_examples=30)
    @given(vec_case())
    @example((1, 256, "float32"))
    @example((257, 256, "float32"))
    @example((300, 128, "int32"))
    @example((0, 32, "float64"))
    @example((1025, 1024, "int64"))
    def prop(case):
        n, tpb, dtype = case
        cc.check_vec_add_results(launch, n, tpb, dtype, DEVICE)

    check_property(prop)


@grader.test(2)
def kernel_bounds(answer: Answer):
    """The kernel alone, on buffers longer than n and with a spare block: nothing at i >= n is touched."""
    (kernel,) = _required(answer.module, "vec_add")

    @settings(max_examples=25)
    @given(vec_case(), st.integers(1, 40))
    @example((20, 8, "float32"), 3)
    @example((0, 4, "float32"), 2)
    def prop(case, extra):
        n, tpb, dtype = case
        cc.check_vec_add_kernel(kernel, n, tpb, extra, dtype, "cpu")
        if GPU:
            cc.check_vec_add_kernel(kernel, n, tpb, extra, dtype, "gpu")

    check_property(prop)


@grader.test(2)
def runs_on_numba(answer: Answer):
    """The launcher, unchanged, on numba's own backend: its CUDA simulator on a CPU, the GPU on a GPU."""
    (launch,) = _required(answer.module, "launch_vec_add")
    cases = [(37, 16, "float32"), (8, 4, "int32")]
    if GPU:
        cases += [(1_000_003, 256, "float32"), (5, 1024, "float64")]
    for n, tpb, dtype in cases:
        try:
            if not GPU:     # the checking simulator first: a kernel that loops forever never reaches numba's
                try:
                    cc.check_vec_add_results(launch, n, tpb, dtype, "cpu")
                except cc.CheckFailed as e:
                    raise cc.CheckFailed(f"not run on numba's simulator, because the checking simulator "
                                         f"found a problem first: {e}") from None
            cc.check_launcher_as_is(launch, n, tpb, dtype)
        except cc.CheckFailed as e:
            raise Fail(str(e), f"n={n}, threads_per_block={tpb}, dtype={dtype!r}") from None
