"""Hidden grader of `tiled_matmul` (notebook 02): C = A @ B with shared-memory tiles.

The kernel runs on the checking simulator of ch13lib.cuda_sim, which runs a block's threads one at
a time and switches only at cuda.syncthreads(): a missing barrier is found deterministically as two
threads touching one shared cell in the same barrier phase; reading shared memory nobody wrote, a
thread returning while its block waits at a barrier, out-of-bounds and negative indices and writes
to A or B are faults. It also counts global reads, which tells a tiled kernel from a naive one.
Sizes straddle the tile (1, 15, 16, 17, 33 ...), K spans one to four tiles, C is square or not.
Inputs are small integers in float32, so every sum is exact and C must equal numpy's exactly.
As in graders/vec_add.py, the cell runs in the grading subject, which sends back observations
(ch13lib.cuda_check's ``subject_*``: C, A and B after the call, each launch's configuration, who
wrote each element of C, per-thread traffic) that the checks judge here.
"""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ch13lib import cuda_check as cc
from ch13lib.cell import missing, not_defined
from graders.api import Answer, Fail, Grader
from graders.vec_add import check_cases, compiled, failing_case

grader = Grader("tiled_matmul", timeout_s=240, harness=("kit.harnesses.cuda_check",))

EDGE = [1, 3, 15, 16, 17, 31]
K_SIZES = [1, 5, 16, 17, 32, 33, 50, 64]


@st.composite
def small_mm(draw):
    """(m, k, n) with at most 2 x 2 blocks of 16 x 16 threads: C's sides at and around the tile."""
    m = draw(st.sampled_from(EDGE))
    n = draw(st.sampled_from(EDGE))
    k = draw(st.sampled_from(K_SIZES))
    return m, k, n


def _required(answer: Answer):
    """The cell's ``ask`` (cuda_check's observations, run in the subject) once the names exist."""
    info = answer.get("tiled_matmul", "launch_tiled_matmul", "TILE")
    if absent := missing(("tiled_matmul", "launch_tiled_matmul"), info, need_callable=False):
        raise Fail(
            not_defined(
                absent[0],
                "tiled_matmul",
                "`TILE = 16`, `tiled_matmul(A, B, C)`, `launch_tiled_matmul(A, B)`",
            )
        )
    tile = info["TILE"]
    tile = tile.get("value") if "value" in tile or not tile.get("defined") else f"a {tile.get('type')}"
    if type(tile) is bool or tile != cc.TILE:
        raise Fail(
            f"the cell must define the module constant TILE = {cc.TILE} (found {tile!r}): the tiles "
            f"are TILE x TILE and so are the blocks"
        )
    return compiled(answer)


@grader.test(1)
def launch_config(answer: Answer):
    """One launch of (TILE, TILE) blocks, ceil(N / TILE) x ceil(M / TILE) of them."""
    ask = _required(answer)

    @settings(max_examples=30)
    @given(st.integers(1, 100), st.integers(1, 100), st.integers(1, 100))
    @example(20, 8, 40)
    @example(16, 16, 16)
    @example(17, 3, 33)
    def prop(m, k, n):
        cc.check_matmul_launch(ask, m, k, n)

    check_cases(prop)


@grader.test(2)
def one_tile(answer: Answer):
    """A single 16 x 16 tile of C with K = 16: one pair of tiles of A and B, one block."""
    ask = _required(answer)
    for m, k, n in [(16, 16, 16), (5, 7, 9)]:
        with failing_case(f"m={m}, k={k}, n={n}"):
            cc.check_matmul_results(ask, m, k, n, answer.device)
            if answer.gpu:  # the barriers and bounds, on the simulator, as on a CPU
                cc.check_matmul_results(ask, m, k, n, "cpu")


@grader.test(4)
def matches_numpy(answer: Answer):
    """C == A @ B for ragged edges, several tiles along K, square and rectangular C; no faults."""
    ask = _required(answer)

    @settings(max_examples=12)
    @given(small_mm())
    @example((16, 32, 16))
    @example((17, 17, 17))
    @example((1, 33, 3))
    @example((20, 5, 31))
    def prop(case):
        m, k, n = case
        cc.check_matmul_results(ask, m, k, n, answer.device)
        if answer.gpu:
            cc.check_matmul_results(ask, m, k, n, "cpu")

    check_cases(prop)


@grader.test(3)
def global_traffic(answer: Answer):
    """A tiled kernel's global traffic: at most 2 * TILE^2 * ceil(K / TILE) reads per block, C written once."""
    ask = _required(answer)
    for m, k, n in [(16, 48, 16), (20, 40, 18)]:
        with failing_case(f"m={m}, k={k}, n={n}"):
            cc.check_matmul_traffic(ask, m, k, n)
