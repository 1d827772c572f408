"""Hidden grader of `dot_reduction` (notebook 02): a block-level tree reduction in shared memory.

The kernel runs on the checking simulator of ch13lib.cuda_sim, which runs a block's threads one at
a time and switches only at cuda.syncthreads(): a missing barrier in the tree or after the load is
two threads touching one shared cell in the same barrier phase, found on every run; reading a
shared cell nobody wrote (the tail of the last block), a thread returning while its block waits at
a barrier, two threads writing partial[k] and accesses out of bounds are faults with the thread's
and block's coordinates. The judge then checks the launch shape (exactly ceil(n / tpb) blocks of
tpb threads), the shared arrays' dtype and size, that thread 0 of block k alone wrote partial[k] and
that it holds the sum of that block's products, and the returned float against math.fsum of
inputs made here (relative error <= 1e-12 for float64 inputs). Inputs are in [0.5, 1.5), so no
cancellation hides an error. On a GPU runner the results are checked on real CUDA too.
"""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ch13lib import cuda_check as cc
from graders.api import Answer, Grader
from graders.vec_add import around_the_block, check_cases, failing_case, required_kernel

grader = Grader("dot_reduction", timeout_s=180, harness=("kit.harnesses.cuda_check",))

TPBS = [1, 2, 4, 8, 32, 64, 128, 256, 512, 1024]
MAX_THREADS = 2100


@st.composite
def dot_case(draw):
    """(n, threads_per_block, dtype) with n at the edges of the block size."""
    n, tpb = around_the_block(draw, TPBS, MAX_THREADS)
    return n, tpb, draw(st.sampled_from(["float64", "float64", "float32"]))


def _required(answer: Answer):
    return required_kernel(answer, "dot_reduction", "dot_kernel", "launch_dot")


def _case(answer: Answer, ask, n, tpb, dtype="float64"):
    with failing_case(f"n={n}, threads_per_block={tpb}, dtype={dtype!r}"):
        cc.check_dot(ask, n, tpb, dtype, answer.device)
        if answer.gpu:  # barriers, divergence and writers are seen on the simulator only
            cc.check_dot(ask, n, tpb, dtype, "cpu")


@grader.test(3)
def one_block(answer: Answer):
    """One full block: the tree with its barriers, thread 0 writing partial[0], the float64 sum."""
    ask = _required(answer)
    for n, tpb in [(64, 64), (256, 256), (8, 8)]:
        _case(answer, ask, n, tpb)


@grader.test(4)
def matches_fsum(answer: Answer):
    """a . b within 1e-12 (float64) / 1e-6 (float32) for sizes around the block; one launch of
    ceil(n / tpb) blocks; each partial the sum of its block; inputs unchanged."""
    ask = _required(answer)

    @settings(max_examples=20)
    @given(dot_case())
    @example((1000, 256, "float64"))
    @example((5, 8, "float64"))
    @example((1025, 1024, "float64"))
    @example((3, 1, "float32"))
    def prop(case):
        n, tpb, dtype = case
        cc.check_dot(ask, n, tpb, dtype, answer.device)

    check_cases(prop)


@grader.test(1)
def edge_cases(answer: Answer):
    """n = 0 launches nothing and returns 0.0; the default of 256 threads per block."""
    ask = _required(answer)
    _case(answer, ask, 0, 32)
    _case(answer, ask, 300, None)
