"""Hidden grader of `vec_add` (notebook 02): the CUDA vecAdd kernel and its launcher.

Every case runs the student's kernel on the checking simulator of ch13lib.cuda_sim (strict about
out-of-bounds and negative indices, writes to the inputs, two threads writing one element and
elements nobody wrote), and compares with numpy. Sizes are drawn around the block size, where
tail bugs live: n = 0, 1, tpb - 1, tpb, tpb + 1, 2 tpb + 1 and odd sizes, threads per block from 1
to 1024, four dtypes. Graded on a GPU (``answer.gpu``: ``python -m graders --gpu``) the results are
checked on real CUDA too.

The cell runs in the grading subject (kit/subject.py): each case asks it for an observation
(kit/harnesses/cuda_check.py's ``subject_*``: the arrays after the call, what the launcher returned, the launch
configurations, which thread wrote each element), and the check judges it here, against numpy on
inputs made here. Faults only the checking simulator sees arrive as a CheckFailed from the subject.
"""

import contextlib

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ch13lib import cuda_check as cc
from ch13lib.lang import Messages
from graders.api import Answer, Fail, Grader, check_property
from kit.harnesses import cuda_check as harness
from kit.judge import Raised
from kit.kernel_compiler import Compiler

grader = Grader("vec_add", timeout_s=180, harness=("kit.harnesses.cuda_check",))

# What this grader says itself, in the course's language (ch13lib/lang.py).
M = Messages(
    needs_kernel=(
        "用 @cuda.jit 装饰的核函数 `{kernel}` 和它的启动函数 `{launcher}`",
        "the kernel `{kernel}` decorated with @cuda.jit and its launcher `{launcher}`",
    ),
    unreported=(
        "未评分: 模拟器没有报告它运行了哪些核函数",
        "not graded: the simulator did not report which kernels it ran",
    ),
)

TPBS = [1, 2, 3, 7, 32, 33, 64, 100, 128, 255, 256, 1000, 1024]
DTYPES = ["float32", "float64", "int32", "int64"]
MAX_THREADS = 3100  # simulated threads per case (about 3 us each on the checking simulator)


@st.composite
def vec_case(draw):
    """(n, threads_per_block, dtype) with n at the edges of the block size."""
    tpb = draw(st.sampled_from(TPBS))
    kind = draw(st.sampled_from(["odd", "block+1", "block-1", "block", "2block+1", "one", "zero"]))
    n = {"zero": 0, "one": 1, "block-1": tpb - 1, "block": tpb, "block+1": tpb + 1, "2block+1": 2 * tpb + 1}.get(kind)
    if n is None:
        n = draw(st.integers(0, max(1, (MAX_THREADS - tpb) // 2))) * 2 + 1
    n = min(n, MAX_THREADS - tpb)
    return n, tpb, draw(st.sampled_from(DTYPES))


def _required(answer: Answer, *names):
    """The cell's ``ask`` (cuda_check's observations, run in the subject) once the names exist."""
    answer.require(
        *names,
        need_callable=False,
        needs=M.both(
            "needs_kernel", kernel="vec_add(a, b, c, n)", launcher="launch_vec_add(a, b, threads_per_block=256)"
        ),
    )
    return compiled(answer)


# Shared with the other graders of notebook 02.

_compiler = Compiler()  # one per judge process, which grades one cell


def start_compiler() -> None:
    """Start the compiler's process now (graders/__main__.py: beside the subject's start)."""
    _compiler.start()


def compiled(answer: Answer):
    """The cell's ``ask``, whose observations count only for kernels numba's CUDA compiler compiles
    from the cell's text for the argument types they ran with (kit/kernel_compiler.py): the
    simulator said what a kernel did, the compiler says that a GPU would run it."""
    _compiler.start()  # its imports overlap the subject's first observation

    def admit(op: str, case: dict, obs) -> None:
        if op not in ("config", "launcher", "kernel") or case.get("device", "cpu") != "cpu":
            return  # as_is runs numba's own simulator; on a GPU numba compiles every launch itself
        ran = obs.get("kernels") if type(obs) is dict else None
        if type(ran) is not list:
            raise cc.CheckFailed(M("unreported"))
        for item in ran:
            kernel, arg_types = item
            refused = _compiler.check(answer.source, answer.filename, str(kernel), arg_types)
            if refused:
                raise cc.CheckFailed(refused)

    return harness.remote(answer.run, admit)


# Shared with the other graders of notebook 02.


def required_kernel(answer: Answer, cell: str, kernel: str, launcher: str):
    """The cell's ``ask`` once ``kernel`` and ``launcher`` exist (asked of the subject, not run)."""
    answer.require(
        kernel,
        launcher,
        need_callable=False,
        cell_name=cell,
        needs=M.both("needs_kernel", kernel=kernel, launcher=launcher),
    )
    return compiled(answer)


def around_the_block(draw, tpbs, max_threads: int) -> tuple[int, int]:
    """(n, threads_per_block): n at the edges of the block size (1, tpb - 1, tpb, tpb + 1, 2 tpb + 1)
    or odd, within ``max_threads`` simulated threads."""
    tpb = draw(st.sampled_from(tpbs))
    kind = draw(st.sampled_from(["odd", "block+1", "block-1", "block", "2block+1", "one"]))
    n = {"one": 1, "block-1": tpb - 1, "block": tpb, "block+1": tpb + 1, "2block+1": 2 * tpb + 1}.get(kind)
    if n is None:
        n = draw(st.integers(0, (max_threads - tpb) // 2)) * 2 + 1
    return max(1, min(n, max_threads - tpb)), tpb


@contextlib.contextmanager
def failing_case(example: str, prefix: str = ""):
    """A failed check, judged here or raised by the simulator beside the cell, as a Fail with ``example``."""
    try:
        yield
    except cc.CheckFailed as e:
        raise Fail(prefix + str(e), example, e.picture) from None
    except Raised as e:
        if not e.from_harness or e.flagged:
            raise
        raise Fail(prefix + e.message, example) from None


def check_cases(prop) -> None:
    """check_property; when hypothesis found failures of several origins (the explicit examples all
    run, and a check judged here fails on a different line than one the subject raises), it raises
    them as an exception group: report the first, as check_property would alone."""
    try:
        check_property(prop)
    except BaseExceptionGroup as group:
        first = group.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]

        def again():
            raise first

        check_property(again)


@grader.test(2)
def launch_config(answer: Answer):
    """launch_vec_add launches vec_add once, with threads_per_block threads and ceil(n / tpb) blocks."""
    ask = _required(answer, "launch_vec_add")
    # the contract's default: launch_vec_add(a, b) uses 256 threads per block
    with failing_case("n=1000, threads_per_block left at its default"):
        cc.check_vec_add_launch(ask, 1000, 256, default_tpb=True)

    @settings(max_examples=40)
    @given(vec_case())
    @example((1000, 256, "float32"))
    @example((257, 256, "float32"))
    @example((0, 256, "float32"))
    @example((1, 1, "int64"))
    def prop(case):
        n, tpb, dtype = case
        cc.check_vec_add_launch(ask, n, tpb, dtype)

    check_cases(prop)


@grader.test(4)
def matches_numpy(answer: Answer):
    """c == a + b for every case; no out-of-bounds, negative-index or input writes; a NEW array."""
    ask = _required(answer, "launch_vec_add")

    @settings(max_examples=30)
    @given(vec_case())
    @example((1, 256, "float32"))
    @example((257, 256, "float32"))
    @example((300, 128, "int32"))
    @example((0, 32, "float64"))
    @example((1025, 1024, "int64"))
    def prop(case):
        n, tpb, dtype = case
        cc.check_vec_add_results(ask, n, tpb, dtype, answer.device)

    check_cases(prop)


@grader.test(2)
def kernel_bounds(answer: Answer):
    """The kernel alone, on buffers longer than n and with a spare block: nothing at i >= n is touched."""
    ask = _required(answer, "vec_add")

    @settings(max_examples=25)
    @given(vec_case(), st.integers(1, 40))
    @example((20, 8, "float32"), 3)
    @example((0, 4, "float32"), 2)
    def prop(case, extra):
        n, tpb, dtype = case
        cc.check_vec_add_kernel(ask, n, tpb, extra, dtype, "cpu")
        if answer.gpu:
            cc.check_vec_add_kernel(ask, n, tpb, extra, dtype, "gpu")

    check_cases(prop)


@grader.test(2)
def runs_on_numba(answer: Answer):
    """The launcher, unchanged, on numba's own backend: its CUDA simulator on a CPU, the GPU on a GPU."""
    ask = _required(answer, "launch_vec_add")
    cases = [(37, 16, "float32"), (8, 4, "int32")]
    if answer.gpu:
        cases += [(1_000_003, 256, "float32"), (5, 1024, "float64")]
    for n, tpb, dtype in cases:
        example = f"n={n}, threads_per_block={tpb}, dtype={dtype!r}"
        if not answer.gpu:  # the checking simulator first: a kernel that loops forever never reaches numba's
            with failing_case(
                example, "not run on numba's simulator, because the checking simulator found a problem first: "
            ):
                cc.check_vec_add_results(ask, n, tpb, dtype, "cpu")
        with failing_case(example):
            cc.check_launcher_as_is(ask, n, tpb, dtype)
