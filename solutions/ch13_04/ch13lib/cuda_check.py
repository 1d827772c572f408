"""Checks of the notebook-02 kernels (vecAdd, grid-stride vecAdd, tiled matmul).

Each ``check_*`` function runs one case and raises :class:`CheckFailed` with a message that says
what is wrong and how to replay it; it returns figures when the case passes. A check has three
parts, so that the code that judges never has to hold the code that is judged:

1. it makes the case: the inputs (:func:`vec_inputs`, :func:`mat_inputs`), the launch, the replay line;
2. it asks for an OBSERVATION of the student's functions on that case: ``ask(op, **case)`` runs one
   of the ``observe_*`` functions below where those functions live and returns plain data only
   (the arrays after the call, what the launcher returned, each launch's configuration, which thread
   wrote each output element, per-thread memory traffic). The observation runs the kernel on the
   checking simulator of :mod:`ch13lib.cuda_sim` (``device="cpu"``), which raises CheckFailed at
   once on what only it can see (out of bounds and negative indices, races, barrier divergence,
   writes to the inputs, two threads writing one element), or on a real GPU through numba.cuda
   (``device="gpu"``);
3. it judges the observation: recomputes the numpy reference from the inputs it made and compares.

The first argument of a check says where to observe: your launcher (or kernel) itself, observed
right here (``check_matmul_results(launch_tiled_matmul, 1, 33, 3)`` in the notebook), or an
:class:`Ask`: :func:`local` for the self-checks at the bottom, :func:`remote` for the hidden graders,
which ask the grading process that runs your cell (the ``subject_*`` functions, listed in
``SUBJECT_API``) on more (and hidden) cases, and judge in their own process.

Inputs are made by :func:`vec_inputs` and :func:`mat_inputs`, and a failing check ends with its
replay line, the same check on the same case over the notebook's own functions (:func:`here`), on
the checking simulator: ``check_vec_add_results(here(), 37, 16)`` shows the same failure again.

This module holds the cases and the checks that judge them, and each notebook's self-check; its
private parts beside it hold the observations, which run where the student's functions are
(``_cuda_check_observe``), and the runner that prints a self-check's lines (``_cuda_check_selfcheck``).
"""

from __future__ import annotations

import numpy as np

from ch13lib._cuda_check_observe import (
    ARRAY_CAP,
    OBSERVE,
    REPR_CAP,
    SENDABLE,
    Ask,
    CheckFailed,
    _asked,
    _replay,
    here,
    local,
    observe_as_is,
    observe_config,
    observe_kernel,
    observe_launcher,
    replayable,
    subject_as_is,
    subject_config,
    subject_kernel,
    subject_launcher,
)
from ch13lib._cuda_check_selfcheck import _self_check

__all__ = [
    "TILE",
    "SENTINEL",
    "REPR_CAP",
    "ARRAY_CAP",
    "SENDABLE",
    "SUBJECT_API",
    "CheckFailed",
    "vec_inputs",
    "mat_inputs",
    "hist_inputs",
    "dot_inputs",
    "observe_config",
    "observe_launcher",
    "observe_kernel",
    "observe_as_is",
    "OBSERVE",
    "Ask",
    "local",
    "here",
    "remote",
    "subject_config",
    "subject_launcher",
    "subject_kernel",
    "subject_as_is",
    "check_vec_add_launch",
    "check_vec_add_results",
    "check_vec_add_kernel",
    "check_launcher_as_is",
    "check_grid_stride_pattern",
    "check_matmul_launch",
    "check_matmul_results",
    "check_matmul_traffic",
    "check_histogram",
    "check_dot",
    "self_check_vec_add",
    "self_check_vec_add_grid_stride",
    "self_check_tiled_matmul",
    "self_check_histogram",
    "self_check_dot_reduction",
    "print_traffic",
]

TILE = 16  # the tiled matmul's tile edge (the notebook's module constant)
SENTINEL = -7  # what the grader puts in output cells a kernel must not touch

# What a hidden grader may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("subject_config", "subject_launcher", "subject_kernel", "subject_as_is")


def remote(run, admit=None) -> Ask:
    """Observe the answer cell where it runs: ``run(harness, **case)`` is the grader's ``answer.run``,
    which runs ``subject_<op>`` of this module (``SUBJECT_API``) in the grading subject and returns
    its plain data; ``admit`` judges each observation first (:class:`Ask`)."""
    return Ask(lambda op, **case: run(f"{__name__}:subject_{op}", **case), admit)


def vec_inputs(n: int, dtype="float32") -> tuple[np.ndarray, np.ndarray]:
    """Two distinct, exactly representable 1-D inputs of length n (any dtype the exercise uses)."""
    i = np.arange(n)
    return (i % 251 + 1).astype(dtype), (i * 7 % 13 + 100).astype(dtype)


def mat_inputs(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A (m x k) and B (k x n), float32, small integers: every product sum is exact in float32."""
    a = ((np.arange(m * k).reshape(m, k) * 5 + 3) % 7 - 3).astype(np.float32)
    b = ((np.arange(k * n).reshape(k, n) * 3 + 1) % 5 - 2).astype(np.float32)
    return a, b


def _first_diff(got: np.ndarray, want: np.ndarray) -> str:
    if got is None:
        return "it can no longer be read back as an array"
    if got.shape != want.shape:
        return f"its shape is now {got.shape}, it was {want.shape}"
    bad = np.argwhere(got != want)
    if not len(bad):
        return ""
    idx = tuple(int(v) for v in bad[0])
    return (
        f"{len(bad)} of {want.size} elements are wrong; the first is [{', '.join(map(str, idx))}]: "
        f"got {got[idx]!r}, expected {want[idx]!r}"
    )


def _same(got, want: np.ndarray) -> bool:
    return got is not None and got.shape == want.shape and np.array_equal(got, want)


def _writers(launch: dict, shape, kernel_name: str, what: str, call: str) -> np.ndarray:
    """Which thread wrote each element of a launch's output. A check that cannot tell fails: it
    never passes a launch it did not see."""
    out = launch.get("writers")
    if not isinstance(out, np.ndarray) or out.ndim != len(shape):
        raise CheckFailed(
            f"could not tell which thread of {kernel_name} wrote each element of {what}: a kernel names "
            "its parameters one by one and writes its output through them" + _replay(call)
        )
    return out


def _unwritten(writer: np.ndarray, limit=None) -> str:
    w = writer if limit is None else writer[:limit]
    missing = np.argwhere(w == -1)
    if not len(missing):
        return ""
    first = [tuple(int(v) for v in m) for m in missing[:5]]
    shown = ", ".join(str(f[0]) if len(f) == 1 else str(f) for f in first)
    return f"{len(missing)} element(s) of the output were never written by any thread (first: {shown})"


def _no_launch_msg(name, launcher):
    return (
        f"{launcher} never launched the kernel `{name}` (it must launch it as "
        f"{name}[blocks, threads_per_block](...), using the global name `{name}`)"
    )


# ---------------------------------------------------------------------------------------------
# judging what a launcher returned


def _check_returned(res: dict, n_shape, dtype, name, names=("a", "b")):
    if res["type"] != "ndarray":
        raise CheckFailed(
            f"{name} returned {res['type']}, not a numpy array: copy the result back "
            f"to the host (d_c.copy_to_host()) and return it"
        )
    if tuple(res["shape"]) != n_shape:
        raise CheckFailed(f"{name} returned an array of shape {tuple(res['shape'])}, expected {n_shape}")
    if res["dtype"] != str(np.dtype(dtype)):
        raise CheckFailed(
            f"{name} returned dtype {res['dtype']}, expected {np.dtype(dtype)} (the inputs' dtype): "
            f"make the output like the inputs (np.empty_like(a))"
        )
    for i in res["shares"]:
        raise CheckFailed(
            f"{name} returned an array that shares memory with its input {names[i]}: return a NEW "
            f"array and leave the inputs unchanged"
        )


# ---------------------------------------------------------------------------------------------
# vecAdd


def _vec_args(n, dtype, tpb, blocks, default_tpb=False) -> tuple:
    """The launcher's arguments, with fresh inputs (the judge keeps its own copy to compare)."""
    a, b = vec_inputs(n, dtype)
    return (a, b) if default_tpb else (a, b, tpb) if blocks is None else (a, b, blocks, tpb)


def _vec_call(n, dtype, launcher, args) -> str:
    return f"a, b = vec_inputs({n}, {str(np.dtype(dtype))!r}); {launcher}({', '.join(['a', 'b', *map(str, args[2:])])})"


@replayable
def check_vec_add_launch(
    ask,
    n: int,
    tpb: int,
    dtype="float32",
    *,
    kernel_name="vec_add",
    launcher="launch_vec_add",
    blocks: int | None = None,
    default_tpb: bool = False,
) -> tuple:
    """One launch, ``tpb`` threads per block, the fewest blocks that cover n (or exactly ``blocks``).
    ``default_tpb``: call the launcher without threads_per_block (its default must be ``tpb``)."""
    ask = _asked(ask, launcher)
    args = _vec_args(n, dtype, tpb, blocks, default_tpb)
    call = _vec_call(n, dtype, launcher, args)
    launches = ask("config", launcher=launcher, kernel_name=kernel_name, args=args, replay=call)["launches"]
    want_blocks = blocks if blocks is not None else -(-n // tpb)
    if n == 0 and not launches:
        return (0,)  # nothing to do: not launching at all is right
    g, bd, raw_g, raw_b = _one_launch(
        launches, kernel_name, launcher, call, f" for n={n}", "with enough blocks for every element"
    )
    if g is None:
        zero = ""
        if n == 0:
            zero = (
                " For n == 0 the formula gives 0 blocks, which a GPU refuses: return an empty array without launching."
            )
        raise CheckFailed(
            f"{launcher} launched {kernel_name}[{raw_g}, {raw_b}]: not a valid launch "
            f"configuration (blocks and threads per block must be integers >= 1).{zero}" + _replay(call)
        )
    g, bd = tuple(g), tuple(bd)
    if bd != (tpb, 1, 1):
        asked = (
            f"called without threads_per_block, whose default must be {tpb}"
            if default_tpb
            else f"threads_per_block={tpb} was asked for"
        )
        raise CheckFailed(
            f"{launcher} launched blocks of {bd[0] * bd[1] * bd[2]} threads (blockdim {raw_b}); {asked}" + _replay(call)
        )
    if n == 0 and blocks is None:
        return g[:1]
    if g[1:] != (1, 1) or g[0] != want_blocks:
        if blocks is not None:
            raise CheckFailed(
                f"{launcher} launched {raw_g} blocks; blocks={blocks} was asked for: use the "
                f"grid the caller chose (the loop covers any n)" + _replay(call)
            )
        few = g[0] * tpb < n
        why = (
            f"{g[0]} blocks x {tpb} threads = {g[0] * tpb} threads cannot cover n = {n} elements: the tail "
            f"is never computed. Round up: blocks = (n + threads_per_block - 1) // threads_per_block"
            if few
            else f"{g[0]} blocks of {tpb} threads for n = {n}: {g[0] - want_blocks} block(s) have no element "
            f"to work on. Use blocks = (n + threads_per_block - 1) // threads_per_block = {want_blocks}"
        )
        raise CheckFailed(f"{launcher} launched {kernel_name}[{raw_g}, {raw_b}]: {why}" + _replay(call))
    return g[:1]


def _run_vec_launcher(ask, n, tpb, dtype, device, kernel_name, launcher, blocks=None):
    ask = _asked(ask, launcher)
    args = _vec_args(n, dtype, tpb, blocks)
    call = _vec_call(n, dtype, launcher, args)
    obs = ask("launcher", launcher=launcher, kernel_name=kernel_name, args=args, device=device, replay=call)
    return obs, call


@replayable
def check_vec_add_results(
    ask,
    n: int,
    tpb: int,
    dtype="float32",
    device="cpu",
    *,
    kernel_name="vec_add",
    launcher="launch_vec_add",
    blocks=None,
) -> dict:
    """The launcher returns a new array equal to a + b; the kernel faults nowhere; inputs unchanged."""
    obs, call = _run_vec_launcher(ask, n, tpb, dtype, device, kernel_name, launcher, blocks)
    a0, b0 = vec_inputs(n, dtype)  # the inputs as they were sent, made again here
    for arr, orig, nm in zip(obs["inputs"], (a0, b0), "ab"):
        if not _same(arr, orig):
            raise CheckFailed(
                f"{launcher} changed its input {nm} ({_first_diff(arr, orig)}): the inputs must "
                f"stay as they were" + _replay(call)
            )
    launches = obs["launches"]
    if n > 0 and not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if device == "cpu":
        for item in launches:
            out = _writers(item, (n,), kernel_name, "its third argument c (length n)", call)
            if out.shape == (n,):
                miss = _unwritten(out)
                if miss:
                    if blocks is None:
                        how = "is the block index part of i, and are there enough blocks?"
                    else:
                        total = blocks * tpb
                        how = (
                            f"the caller chose {blocks} x {tpb} = {total} thread{'s' if total > 1 else ''} "
                            f"for n = {n}, so each thread loops: i = cuda.grid(1), then "
                            f"i += cuda.gridsize(1) while i < n."
                        )
                    raise CheckFailed(
                        f"after {kernel_name}: {miss}. Every index 0 <= i < n needs a thread: {how}" + _replay(call)
                    )
    _check_returned(obs["result"], (n,), dtype, launcher)
    want = a0 + b0
    c = obs["result"]["value"]
    if not np.array_equal(c, want):
        raise CheckFailed(f"{launcher} returned wrong values: {_first_diff(c, want)}" + _replay(call))
    return {"launches": len(launches)}


@replayable
def check_vec_add_kernel(
    ask,
    n: int,
    tpb: int,
    extra: int = 3,
    dtype="float32",
    device="cpu",
    *,
    kernel_name="vec_add",
    blocks: int | None = None,
) -> dict:
    """Launch the kernel directly on arrays LONGER than n (n + extra), with more threads than n.

    No thread may touch index n or beyond (the buffers go on, so only ``n`` tells the kernel
    where to stop); c[:n] == a + b; c[n:] and the inputs untouched.
    """
    ask = _asked(ask, kernel_name)
    size = n + extra
    a0, b0 = vec_inputs(size, dtype)
    c0 = np.full(size, SENTINEL, dtype)
    if blocks is None:
        blocks = -(-n // tpb) + 1  # one whole block more than needed
    call = (
        f"a, b = vec_inputs({size}, {str(np.dtype(dtype))!r}); c = np.full({size}, {SENTINEL}, a.dtype); "
        f"{kernel_name}[{blocks}, {tpb}](a, b, c, {n})  # buffers of {size}, n = {n}"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=blocks,
        blockdim=tpb,
        args=(a0.copy(), b0.copy(), c0, n),
        device=device,
        replay=call,
        readonly=(0, 1),
        limits={0: n, 1: n, 2: n},
    )
    a, b, c = obs["args"]
    if device == "cpu":
        writers = obs["writers"]
        miss = _unwritten(writers, n) if writers is not None else "the output was not an array"
        if miss:
            raise CheckFailed(f"{kernel_name}[{blocks}, {tpb}] with n = {n}: {miss}" + _replay(call))
    for arr, orig, nm in ((a, a0, "a"), (b, b0, "b")):
        if not _same(arr, orig):
            raise CheckFailed(f"{kernel_name} changed its input {nm} ({_first_diff(arr, orig)})" + _replay(call))
    if c is None or c.shape != (size,):
        raise CheckFailed(f"{kernel_name}: the output c can no longer be read back as it was passed" + _replay(call))
    tail = c[n:]
    if not np.all(tail == SENTINEL):
        i = int(np.argwhere(tail != SENTINEL)[0][0]) + n
        raise CheckFailed(
            f"{kernel_name} wrote c[{i}] although n = {n}: no thread may write at index >= n "
            f"(guard with `if i < n`, using n, not the array's size)" + _replay(call)
        )
    want = a0[:n] + b0[:n]
    if not np.array_equal(c[:n], want):
        raise CheckFailed(f"{kernel_name} computed wrong values: {_first_diff(c[:n], want)}" + _replay(call))
    return {"threads": blocks * tpb, "writers": obs["writers"]}


@replayable
def check_launcher_as_is(ask, n: int, tpb: int, dtype="float32", *, launcher="launch_vec_add", blocks=None) -> None:
    """Run the launcher unchanged, on whatever numba.cuda is where it runs (numba's own simulator
    on a CPU, the GPU on a GPU machine), and compare with numpy."""
    ask = _asked(ask, launcher)
    args = _vec_args(n, dtype, tpb, blocks)
    call = _vec_call(n, dtype, launcher, args)
    a0, b0 = vec_inputs(n, dtype)
    obs = ask("as_is", launcher=launcher, args=args)
    if not all(_same(arr, orig) for arr, orig in zip(obs["inputs"], (a0, b0))):
        raise CheckFailed(f"{launcher} changed its inputs on numba's backend" + _replay(call))
    _check_returned(obs["result"], (n,), dtype, launcher)
    c = obs["result"]["value"]
    if not np.array_equal(c, a0 + b0):
        raise CheckFailed(
            f"on numba's own backend {launcher} returned wrong values: {_first_diff(c, a0 + b0)}" + _replay(call)
        )


@replayable
def check_grid_stride_pattern(
    ask,
    n: int,
    blocks: int,
    tpb: int,
    dtype="float32",
    *,
    kernel_name="vec_add_grid_stride",
    launcher="launch_vec_add_grid_stride",
) -> None:
    """Element i is computed by global thread i % (blocks * threads_per_block): the grid-stride
    loop, in which neighbouring threads touch neighbouring elements (coalesced accesses)."""
    obs, call = _run_vec_launcher(ask, n, tpb, dtype, "cpu", kernel_name, launcher, blocks)
    if not obs["launches"]:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    first = obs["launches"][0]
    out = first.get("writers")
    if out is None or out.shape != (n,):
        raise CheckFailed(f"{kernel_name} must write its third argument c (length n)" + _replay(call))
    stride = first["griddim"][0] * first["blockdim"][0]
    want = np.arange(n) % stride
    bad = np.argwhere(out != want)
    if len(bad):
        i = int(bad[0][0])
        who = "no thread" if out[i] < 0 else f"global thread {int(out[i])}"
        raise CheckFailed(
            f"not a grid-stride loop: c[{i}] was written by {who}, but in a grid-stride loop global thread "
            f"i % (blocks * threads_per_block) = {i % stride} computes it (start at cuda.grid(1), step by "
            f"cuda.gridsize(1)). Neighbouring threads then touch neighbouring elements, which a GPU "
            f"coalesces into one memory transaction." + _replay(call)
        )


# ---------------------------------------------------------------------------------------------
# tiled matmul


def _mm_call(m, k, n, launcher="launch_tiled_matmul"):
    return f"A, B = mat_inputs({m}, {k}, {n}); {launcher}(A, B)"


def _one_launch(launches, kernel_name, launcher, call, where: str, how: str) -> tuple:
    """The one launch a launcher must make: (griddim, blockdim, and both as the cell wrote them);
    no launch or several fail with their message (``where``: " for n=...", ``how``: what one
    launch must cover)."""
    if not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if len(launches) > 1:
        raise CheckFailed(
            f"{launcher} launched {kernel_name} {len(launches)} times{where}: launch it once, {how}" + _replay(call)
        )
    raw_g, raw_b = launches[0]["raw"]
    return launches[0]["griddim"], launches[0]["blockdim"], raw_g, raw_b


@replayable
def check_matmul_launch(
    ask, m: int, k: int, n: int, *, kernel_name="tiled_matmul", launcher="launch_tiled_matmul"
) -> tuple:
    """One launch of TILE x TILE blocks, just enough of them to cover C (m x n)."""
    ask = _asked(ask, launcher)
    call = _mm_call(m, k, n, launcher)
    launches = ask("config", launcher=launcher, kernel_name=kernel_name, args=mat_inputs(m, k, n), replay=call)[
        "launches"
    ]
    if not launches:
        if m == 0 or n == 0:
            return ()
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    g, bd, raw_g, raw_b = _one_launch(launches, kernel_name, launcher, call, "", "with a 2-D grid of tiles")
    if g is None:
        raise CheckFailed(
            f"{launcher} launched {kernel_name}[{raw_g}, {raw_b}]: not a valid launch "
            f"configuration (integers >= 1)" + _replay(call)
        )
    g, bd = tuple(g), tuple(bd)
    if bd != (TILE, TILE, 1):
        raise CheckFailed(
            f"{launcher} launched blocks of shape {raw_b}: each block computes one "
            f"TILE x TILE tile of C, so blockdim must be (TILE, TILE) = ({TILE}, {TILE})" + _replay(call)
        )
    tiles_n, tiles_m = -(-n // TILE), -(-m // TILE)
    if g not in ((tiles_n, tiles_m, 1), (tiles_m, tiles_n, 1)):
        raise CheckFailed(
            f"{launcher} launched a grid of {raw_g} blocks for C of shape ({m}, {n}): it needs "
            f"ceil({n}/{TILE}) = {tiles_n} blocks along the columns (x) and ceil({m}/{TILE}) = "
            f"{tiles_m} along the rows (y), i.e. ({tiles_n}, {tiles_m})" + _replay(call)
        )
    return g


def _not_the_kernels(launches, got: np.ndarray, kernel_name: str, launcher: str) -> str:
    """On the checking simulator: why ``got`` (what the launcher returned) is not what the kernel
    wrote into its output argument in its last launch (leading block: a padded output may be cut);
    "" when it is, or when nothing was recorded. So a launcher cannot compute the answer on the host
    and launch a kernel that does nothing."""
    outs = [item for item in launches if isinstance(item.get("out"), np.ndarray)]
    if not outs:
        return ""
    out, prefilled = outs[-1]["out"], outs[-1].get("prefilled")
    if out.ndim == got.ndim and all(a >= b for a, b in zip(out.shape, got.shape)):
        if np.array_equal(out[tuple(slice(0, s) for s in got.shape)], got):
            return ""
    where = "its shape is " + str(out.shape)
    if out.shape == got.shape:
        i = tuple(int(v) for v in np.argwhere(out != got)[0])
        where = f"at {list(i)} it wrote {out[i].item()!r} where the launcher returned {got[i].item()!r}"
    return (
        f"{launcher} returned the right values, but not the ones {kernel_name} wrote into its output "
        f"argument ({where}): the kernel must compute them, and the launcher return what it wrote"
        + (PREFILLED if prefilled else "")
    )


# Said where the output held values before the launch that the kernel, run again on the launcher's
# own inputs from a zeroed output, does not make (cuda_sim.Spy._own_outputs).
PREFILLED = (
    ". (Launched again on the very inputs the launcher gave it, with its output zeroed, the kernel "
    "wrote that: what the output held before the launch came from the host, not from the kernel.)"
)


@replayable
def check_matmul_results(
    ask,
    m: int,
    k: int,
    n: int,
    device="cpu",
    *,
    kernel_name="tiled_matmul",
    launcher="launch_tiled_matmul",
    stats: bool = False,
):
    """C = A @ B exactly (small integers in float32); no faults, races or divergent barriers.
    Returns the first launch as observed (with per-thread traffic if ``stats``), or None."""
    ask = _asked(ask, launcher)
    A0, B0 = mat_inputs(m, k, n)
    call = _mm_call(m, k, n, launcher)
    obs = ask(
        "launcher",
        launcher=launcher,
        kernel_name=kernel_name,
        args=mat_inputs(m, k, n),
        device=device,
        replay=call,
        stats=stats,
    )
    if not all(_same(arr, orig) for arr, orig in zip(obs["inputs"], (A0, B0))):
        raise CheckFailed(f"{launcher} changed its input A or B: they must stay as they were" + _replay(call))
    launches = obs["launches"]
    if m and n and not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    first = launches[0] if launches else None
    if first is not None:
        out = _writers(first, (m, n), kernel_name, "its third argument C (m x n)", call)
        if out.shape == (m, n):
            miss = _unwritten(out)
            if miss:
                raise CheckFailed(
                    f"after {kernel_name}: {miss}. Each thread computes C[row, col] with "
                    f"row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + "
                    f"threadIdx.x" + _replay(call)
                )
    want = (A0.astype(np.float64) @ B0.astype(np.float64)).astype(np.float32)
    res = obs["result"]
    if res["type"] != "ndarray":
        raise CheckFailed(f"{launcher} returned {res['type']}, not a numpy array" + _replay(call))
    if tuple(res["shape"]) != (m, n):
        raise CheckFailed(f"{launcher} returned shape {tuple(res['shape'])}, expected ({m}, {n})" + _replay(call))
    if res["dtype"] != "float32":
        raise CheckFailed(f"{launcher} returned dtype {res['dtype']}, expected float32" + _replay(call))
    C = res["value"]
    if not np.array_equal(C, want):
        hint = ""
        if k > TILE:
            hint = (
                f" With K = {k} > TILE the sum runs over {-(-k // TILE)} tiles: load a new pair of "
                f"tiles of A and B for each one (the chapter's kernel loads one tile only)."
            )
        raise CheckFailed(f"{launcher} returned a wrong C = A @ B: {_first_diff(C, want)}.{hint}" + _replay(call))
    why = _not_the_kernels(launches, C, kernel_name, launcher)
    if why:
        raise CheckFailed(why + _replay(call))
    if device == "cpu" and first is not None and first["griddim"] and first["blockdim"] and m and n:
        alone = _check_matmul_kernel_alone(ask, m, k, n, first, kernel_name, stats=stats)
        if stats:
            first = {**first, "alone_stats": alone.get("stats")}
    return first


def _check_matmul_kernel_alone(ask, m, k, n, launch, kernel_name, stats: bool = False) -> dict:
    """The kernel alone, launched as the launcher launched it, on inputs the launcher never saw and
    a zeroed C, must compute A @ B: the kernel, not the host, computes C."""
    A, B = (x + 1 for x in mat_inputs(m, k, n))  # small integers still: every sum exact in float32
    g, b = tuple(launch["griddim"]), tuple(launch["blockdim"])
    call = (
        f"A, B = mat_inputs({m}, {k}, {n}); A, B = A + 1, B + 1; C = np.zeros(({m}, {n}), np.float32); "
        f"{kernel_name}[{g}, {b}](A, B, C)"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=g,
        blockdim=b,
        args=(A, B, np.zeros((m, n), np.float32)),
        replay=call,
        readonly=(0, 1),
        stats=stats,
    )
    C, want = obs["args"][2], (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    if not np.array_equal(C, want):
        raise CheckFailed(
            f"{kernel_name} launched on its own ({kernel_name}[{g}, {b}], as your launcher launches it) on other "
            f"inputs and a zeroed C left a wrong C = A @ B: {_first_diff(C, want)}. The kernel must compute "
            f"C from A and B, whatever the launcher put in C" + _replay(call)
        )
    return obs


def _coords(a: np.ndarray, i: int) -> tuple:
    return tuple(int(v) for v in a[i][:2])


@replayable
def check_matmul_traffic(
    ask, m: int, k: int, n: int, *, kernel_name="tiled_matmul", launcher="launch_tiled_matmul"
) -> dict:
    """Global traffic of a tiled kernel: each block reads each needed tile of A and B once, so no
    more than 2 * TILE * TILE * ceil(K / TILE) global reads per block in all, and every thread
    writes C once (accumulating in a register). A naive kernel reads 2 * K per thread."""
    ask = _asked(ask, launcher)
    first = check_matmul_results(ask, m, k, n, "cpu", kernel_name=kernel_name, launcher=launcher, stats=True)
    call = _mm_call(m, k, n, launcher)
    # the launcher's launch, and the kernel alone on a zeroed C: a kernel is tiled whatever C held
    # before the launch, not only on the launcher's own inputs
    alone = first.get("alone_stats")
    st = first["stats"]
    if isinstance(alone, dict) and isinstance(alone.get("global_reads"), np.ndarray):
        if int(alone["global_reads"].sum()) > int(st["global_reads"].sum()):
            st = alone
    g = first["griddim"]
    blocks = g[0] * g[1] * g[2]
    tiles = -(-k // TILE)
    bound = blocks * 2 * TILE * TILE * tiles
    reads = int(st["global_reads"].sum())
    naive = blocks * TILE * TILE * 2 * k
    figures = {
        "global_reads": reads,
        "tiled_bound": bound,
        "naive": naive,
        "shared_reads": int(st["shared_reads"].sum()),
        "threads": int(len(st["global_reads"])),
    }
    if reads > bound:
        w = int(np.argmax(st["global_reads"]))
        raise CheckFailed(
            f"{kernel_name} read global memory {reads} times for A ({m}x{k}) @ B ({k}x{n}); a tiled kernel "
            f"reads at most {bound} (each of the {blocks} block(s) loads {tiles} tile(s) of A and of B, one "
            f"element per thread per tile); a naive kernel reads {naive}. Thread {_coords(st['thread'], w)} of "
            f"block {_coords(st['block'], w)} made {int(st['global_reads'][w])} global reads. Inside the k loop "
            f"read only the shared tiles, and keep the running sum in a local variable." + _replay(call)
        )
    if len(st["global_writes"]):
        w = int(np.argmax(st["global_writes"]))
        if st["global_writes"][w] > 1:
            raise CheckFailed(
                f"thread {_coords(st['thread'], w)} of block {_coords(st['block'], w)} wrote global memory "
                f"{int(st['global_writes'][w])} times: accumulate the sum in a local variable and write "
                f"C[row, col] once, at the end" + _replay(call)
            )
    return figures


# ---------------------------------------------------------------------------------------------
# histogram (atomics)


def hist_inputs(n: int, n_bins: int) -> np.ndarray:
    """n int32 values in [0, n_bins), unevenly spread, so that many threads hit the same bin."""
    i = np.arange(n, dtype=np.int64)
    return ((i * i * 11 + i * 37 + 5) % max(n_bins, 1)).astype(np.int32)


def _hist_call(n, n_bins, tpb, launcher="launch_histogram") -> str:
    extra = "" if tpb is None else f", {tpb}"
    return f"data = hist_inputs({n}, {n_bins}); {launcher}(data, {n_bins}{extra})"


def _check_spread(launch: dict, n: int, n_bins: int, kernel_name: str, launcher: str, call: str) -> None:
    """The launch's threads share the elements: none reads global memory much more than its share of
    the data (each element read once, with slack), nor makes many more atomic updates than its
    elements and one merge of a whole shared histogram (n_bins: a block's thread 0 may merge it
    alone, as the contract allows). One thread counting every element with a plain ``bins[v] += 1``
    loses no update, and is no parallel histogram; atomics are not counted as reads, so a thread-0
    merge passes."""
    stats, g, b = launch.get("stats") or {}, launch["griddim"], launch["blockdim"]
    reads, atomics = stats.get("global_reads"), stats.get("global_atomics")
    if not isinstance(reads, np.ndarray) or not isinstance(atomics, np.ndarray) or not reads.size:
        return
    if not g or not b or n == 0:
        return
    threads, tpb = int(np.prod(g)) * int(np.prod(b)), int(np.prod(b))
    each = -(-n // threads)
    plain = reads - atomics
    for counts, share, what in (
        (plain, 3 * each + 4, "global reads"),
        (atomics, each + n_bins + 4, "atomic updates of global memory"),
    ):
        t = int(counts.argmax())
        if int(counts[t]) > share:
            raise CheckFailed(
                f"thread {t % tpb} of block {t // tpb} made {int(counts[t])} {what}, where the {threads} threads "
                f"of {launcher}'s launch have {each} element(s) each to count: every thread counts its "
                f"own element(s) (one thread per element, or a grid-stride loop), with cuda.atomic.add on the "
                f"bins" + _replay(call)
            )


@replayable
def check_histogram(
    ask,
    n: int,
    n_bins: int,
    tpb: int | None = 256,
    device="cpu",
    *,
    calls: int = 1,
    kernel_name="histogram_kernel",
    launcher="launch_histogram",
) -> dict:
    """launch_histogram returns a NEW int32 array of n_bins counts equal to np.bincount(data); the
    kernel runs on the checking simulator (a plain ``bins[v] += 1`` that two threads apply to one bin
    is reported, whatever the order); blocks of ``threads_per_block`` threads; data unchanged.
    ``calls`` > 1 calls it again on the same data: every call counts from zero."""
    ask = _asked(ask, launcher)
    call = _hist_call(n, n_bins, tpb, launcher)
    want = np.bincount(hist_inputs(n, n_bins), minlength=n_bins).astype(np.int32)
    for k in range(calls):
        args = (hist_inputs(n, n_bins), n_bins) if tpb is None else (hist_inputs(n, n_bins), n_bins, tpb)
        obs = ask(
            "launcher",
            launcher=launcher,
            kernel_name=kernel_name,
            args=args,
            device=device,
            replay=call,
            readonly=(0,),
            out_pos=1,
            stats=device == "cpu",
        )
        if not _same(obs["inputs"][0] if obs["inputs"] else None, hist_inputs(n, n_bins)):
            raise CheckFailed(f"{launcher} changed its input data: it must stay as it was" + _replay(call))
        launches = obs["launches"]
        if n > 0 and not launches:
            raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
        want_tpb = 256 if tpb is None else tpb
        for item in launches:
            if item["blockdim"] is not None and tuple(item["blockdim"]) != (want_tpb, 1, 1):
                raise CheckFailed(
                    f"{launcher} launched {kernel_name}[{item['raw'][0]}, {item['raw'][1]}]: launch "
                    f"blocks of threads_per_block = {want_tpb} threads (the caller's choice)" + _replay(call)
                )
        for item in launches:
            _check_spread(item, n, n_bins, kernel_name, launcher, call)
        res = obs["result"]
        if res["type"] != "ndarray":
            raise CheckFailed(f"{launcher} returned {res['type']}, not a numpy array of counts" + _replay(call))
        if tuple(res["shape"]) != (n_bins,) or res["dtype"] != "int32":
            raise CheckFailed(
                f"{launcher} returned an array of shape {tuple(res['shape'])} and dtype {res['dtype']}: "
                f"the counts are a NEW int32 array of n_bins = {n_bins} elements "
                f"(np.zeros({n_bins}, np.int32))" + _replay(call)
            )
        if res["shares"]:
            raise CheckFailed(f"{launcher} returned its input data: return a NEW array of counts" + _replay(call))
        got = res["value"]
        if not np.array_equal(got, want):
            total = int(got.sum())
            if k > 0:
                why = (
                    f"call {k + 1} on the same data returned different counts than the first "
                    f"({_first_diff(got, want)}): each call counts from zero; keep no state between calls "
                    f"(a new bins array per call, zeroed)"
                )
            elif total < n:
                why = (
                    f"it counted {total} of the {n} elements ({_first_diff(got, want)}): some elements got "
                    f"no thread. With n not a multiple of threads_per_block, round the number of blocks up "
                    f"(or loop with a grid-stride loop)"
                )
            elif total > n:
                why = (
                    f"it counted {total} values for {n} elements, some twice, or counts kept from an earlier call "
                    f"(each call starts from zeros) ({_first_diff(got, want)})"
                )
            else:
                why = f"wrong counts ({_first_diff(got, want)})"
            raise CheckFailed(f"{launcher}: {why}" + _replay(call))
        why = _not_the_kernels(launches, got, kernel_name, launcher)
        if why:
            raise CheckFailed(why + _replay(call))
        if k == 0 and device == "cpu" and n > 0:
            _check_histogram_kernel_alone(ask, n, n_bins, launches[0], kernel_name, launcher)
    return {"launches": len(launches)}


def _check_histogram_kernel_alone(ask, n, n_bins, launch, kernel_name, launcher) -> None:
    """The kernel alone, launched as the launcher first launched it, on data the launcher never saw
    and zeroed bins, must count every element with no lost update and no thread over its share: a
    launcher cannot pass np.bincount in as ``bins`` to a kernel that does nothing, nor split a plain
    ``bins[v] += 1`` over launches so that no bin is hit twice in one."""
    if launch["griddim"] is None or launch["blockdim"] is None:
        return
    data = ((hist_inputs(n, n_bins).astype(np.int64) * 7 + 3) % n_bins).astype(np.int32)
    data[: min(n, 64)] = 0  # one bin hit by many threads of the first block
    g, b = tuple(launch["griddim"]), tuple(launch["blockdim"])
    call = (
        f"data = (hist_inputs({n}, {n_bins}).astype(np.int64) * 7 + 3) % {n_bins}; data[:64] = 0; "
        f"bins = np.zeros({n_bins}, np.int32); {kernel_name}[{g}, {b}](data.astype(np.int32), bins)"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=g,
        blockdim=b,
        args=(data, np.zeros(n_bins, np.int32)),
        replay=call,
        readonly=(0,),
        out_pos=1,
        stats=True,
    )
    got, want = obs["args"][1], np.bincount(data, minlength=n_bins).astype(np.int32)
    if not np.array_equal(got, want):
        raise CheckFailed(
            f"{kernel_name} launched on its own ({kernel_name}[{g}, {b}], as your launcher first launches it) on "
            f"other data and zeroed bins counted wrong: {_first_diff(got, want)}. The kernel must count every "
            f"element of data into bins, from zero, in one launch" + _replay(call)
        )
    _check_spread({"griddim": g, "blockdim": b, "stats": obs.get("stats")}, n, n_bins, kernel_name, launcher, call)


# ---------------------------------------------------------------------------------------------
# dot product: a tree reduction in shared memory


def _dot_tol(dtype) -> float:
    """The relative error a dot product (or a block's partial sum) may carry: 1e-12 in float64."""
    return 1e-12 if np.dtype(dtype) == np.float64 else 1e-6


def _check_dot_kernel_alone(ask, n, tpb, dtype, blocks, kernel_name) -> None:
    """The kernel alone, on inputs the launcher never saw and a zeroed ``partial``: each block's sum
    of products, written by its thread 0: the block sums are the kernel's, not the host's."""
    a, b = (x[::-1].copy() for x in dot_inputs(n, dtype))
    call = (
        f"a, b = (x[::-1].copy() for x in dot_inputs({n}, {dtype!r})); partial = np.zeros({blocks}); "
        f"{kernel_name}[{blocks}, {tpb}](a, b, partial)"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=(blocks, 1, 1),
        blockdim=(tpb, 1, 1),
        args=(a, b, np.zeros(blocks, np.float64)),
        replay=call,
        readonly=(0, 1),
        out_pos=2,
    )
    part = obs["args"][2]
    for k in range(blocks):
        lo, hi = k * tpb, min(n, (k + 1) * tpb)
        block_sum = _exact_dot(a[lo:hi], b[lo:hi])
        if _rel(float(part[k]), block_sum) > _dot_tol(dtype):
            raise CheckFailed(
                f"{kernel_name} launched on its own ({kernel_name}[{blocks}, {tpb}]) on other inputs and a zeroed "
                f"partial left partial[{k}] = {float(part[k])!r}, not its block's sum {block_sum!r}: the kernel "
                f"must compute each block's sum from a and b, whatever the launcher put in partial" + _replay(call)
            )


def dot_inputs(n: int, dtype="float64") -> tuple[np.ndarray, np.ndarray]:
    """Two 1-D inputs of length n in [0.5, 1.5) (no cancellation, so relative errors are meaningful)."""
    rng = np.random.default_rng(1000 + n)
    return (rng.random(n) + 0.5).astype(dtype), (rng.random(n) + 0.5).astype(dtype)


def _dot_call(n, dtype, tpb, launcher="launch_dot") -> str:
    extra = "" if tpb is None else f", {tpb}"
    return f"a, b = dot_inputs({n}, {str(np.dtype(dtype))!r}); {launcher}(a, b{extra})"


def _exact_dot(a: np.ndarray, b: np.ndarray) -> float:
    import math

    return math.fsum((a.astype(np.float64) * b.astype(np.float64)).tolist())


def _rel(got: float, want: float) -> float:
    return abs(got - want) / max(abs(want), 1e-300)


@replayable
def check_dot(
    ask,
    n: int,
    tpb: int | None = 256,
    dtype="float64",
    device="cpu",
    *,
    kernel_name="dot_kernel",
    launcher="launch_dot",
) -> dict:
    """launch_dot(a, b, tpb) == a @ b (relative error <= 1e-12 for float64 inputs, 1e-6 for float32)
    as a Python float; one launch of ceil(n / tpb) blocks of tpb threads; thread 0 of block k alone
    writes partial[k], the sum of its block's products; float64 shared memory; inputs unchanged."""
    ask = _asked(ask, launcher)
    call = _dot_call(n, dtype, tpb, launcher)
    a0, b0 = dot_inputs(n, dtype)
    want_tpb = 256 if tpb is None else tpb
    args = (a0.copy(), b0.copy()) if tpb is None else (a0.copy(), b0.copy(), tpb)
    obs = ask(
        "launcher",
        launcher=launcher,
        kernel_name=kernel_name,
        args=args,
        device=device,
        replay=call,
        readonly=(0, 1),
        out_pos=2,
        stats=device == "cpu",
    )
    for arr, orig, nm in zip(obs["inputs"], (a0, b0), "ab"):
        if not _same(arr, orig):
            raise CheckFailed(f"{launcher} changed its input {nm}: the inputs must stay as they were" + _replay(call))
    launches = obs["launches"]
    blocks = -(-n // want_tpb)
    if n > 0 and not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if len(launches) > 1:
        raise CheckFailed(f"{launcher} launched {kernel_name} {len(launches)} times: launch it once" + _replay(call))
    for item in launches:
        g, bd = item["griddim"], item["blockdim"]
        if g is not None and (tuple(g), tuple(bd)) != ((blocks, 1, 1), (want_tpb, 1, 1)):
            raise CheckFailed(
                f"{launcher} launched {kernel_name}[{item['raw'][0]}, {item['raw'][1]}] for n = {n}: launch "
                f"exactly ceil(n / threads_per_block) = {blocks} block(s) of threads_per_block = {want_tpb} "
                f"threads, one partial sum per block" + _replay(call)
            )
        for name, shape, dt in item.get("shared") or ():
            if dt != "float64":
                raise CheckFailed(
                    f"{kernel_name}'s shared array {name} is {dt}: accumulate the products in a float64 "
                    f"shared array (cuda.shared.array(size, numba.float64)) so the sum keeps its digits" + _replay(call)
                )
            if shape and shape[0] < want_tpb:
                raise CheckFailed(
                    f"{kernel_name}'s shared array {name} has {shape[0]} cells for blocks of {want_tpb} threads: "
                    f"one cell per thread, so at least the largest block (1024)" + _replay(call)
                )
        reads = (item.get("stats") or {}).get("global_reads")
        if isinstance(reads, np.ndarray) and reads.size and int(reads.max()) > 4:  # a[i], b[i], some slack
            t = int(reads.argmax())
            raise CheckFailed(
                f"thread {t % want_tpb} of block {t // want_tpb} read {int(reads[t])} elements of a and b from "
                f"global memory: each thread reads its own a[i] and b[i] once, and the block adds the products "
                f"in shared memory, in a tree with cuda.syncthreads() (not one thread looping over them)"
                + _replay(call)
            )
        if device == "cpu":
            _writers(item, (blocks,), kernel_name, "its third argument partial", call)
        w, part = item.get("writers"), item.get("out")
        if device == "cpu" and part is not None and w.ndim == 1 and len(w) >= blocks:
            for k in range(blocks):
                lo, hi = k * want_tpb, min(n, (k + 1) * want_tpb)
                tail = PREFILLED if item.get("prefilled") else ""
                if w[k] == -1:
                    raise CheckFailed(f"after {kernel_name}: partial[{k}] was never written" + tail + _replay(call))
                if w[k] != k * want_tpb:
                    raise CheckFailed(
                        f"partial[{k}] was written by global thread {int(w[k])}, not by thread 0 of block {k}: "
                        f"after the tree, thread 0 alone (`if cuda.threadIdx.x == 0:`) writes its block's sum"
                        + _replay(call)
                    )
                block_sum = _exact_dot(a0[lo:hi], b0[lo:hi])
                if _rel(float(part[k]), block_sum) > _dot_tol(dtype):
                    raise CheckFailed(
                        f"partial[{k}] = {float(part[k])!r}, but the products of block {k} (elements {lo} to "
                        f"{hi - 1}) sum to {block_sum!r}: every product of the block must reach the tree, "
                        f"and the tree must add every cell once" + tail + _replay(call)
                    )
    if device == "cpu" and n > 0 and launches and launches[0]["griddim"] is not None:
        _check_dot_kernel_alone(ask, n, want_tpb, dtype, blocks, kernel_name)
    res = obs["result"]
    if res["type"] not in ("float", "float64") or "value" not in res:
        raise CheckFailed(
            f"{launcher} returned {res['type']}: return the dot product as a Python float" + _replay(call)
        )
    want = _exact_dot(a0, b0)
    got = res["value"]
    tol = _dot_tol(dtype)
    if n == 0:
        if got != 0.0:
            raise CheckFailed(f"{launcher} of two empty arrays returned {got!r}, not 0.0" + _replay(call))
    elif not _rel(got, want) <= tol:
        raise CheckFailed(
            f"{launcher} returned {got!r}, but a . b = {want!r} (relative error {_rel(got, want):.1e} > {tol:.0e}): "
            f"sum the partials on the host in float64" + _replay(call)
        )
    return {"blocks": blocks}


def self_check_vec_add(vec_add, launch_vec_add) -> bool:
    return _self_check(
        "vec_add",
        dict(vec_add=vec_add, launch_vec_add=launch_vec_add),
        lambda ask: [
            ("launch config: n=1000, 256 threads/block -> 4 blocks", lambda: check_vec_add_launch(ask, 1000, 256)),
            (
                "launch_vec_add(a, b) without threads_per_block: 256 threads/block (n=600 -> 3 blocks)",
                lambda: check_vec_add_launch(ask, 600, 256, default_tpb=True),
            ),
            ("tail: n=37, 16 threads/block", lambda: check_vec_add_results(ask, 37, 16)),
            ("n=1 with 1024 threads/block, int32", lambda: check_vec_add_results(ask, 1, 1024, "int32")),
            ("n=0 returns an empty array", lambda: check_vec_add_results(ask, 0, 32)),
            ("kernel touches nothing at i >= n (buffers longer than n)", lambda: check_vec_add_kernel(ask, 20, 8)),
        ],
    )


def self_check_vec_add_grid_stride(vec_add_grid_stride, launch_vec_add_grid_stride) -> bool:
    kw = dict(kernel_name="vec_add_grid_stride", launcher="launch_vec_add_grid_stride")
    return _self_check(
        "vec_add_grid_stride",
        dict(vec_add_grid_stride=vec_add_grid_stride, launch_vec_add_grid_stride=launch_vec_add_grid_stride),
        lambda ask: [
            ("launches exactly blocks x threads", lambda: check_vec_add_launch(ask, 50, 8, blocks=2, **kw)),
            (
                "grid smaller than n: 2 blocks x 8 threads, n=50",
                lambda: check_vec_add_results(ask, 50, 8, blocks=2, **kw),
            ),
            ("grid larger than n: 3 blocks x 8 threads, n=5", lambda: check_vec_add_results(ask, 5, 8, blocks=3, **kw)),
            ("grid-stride pattern (coalesced)", lambda: check_grid_stride_pattern(ask, 40, 2, 4)),
            (
                "kernel touches nothing at i >= n: 2 blocks x 4 threads, n=19, buffers of 24",
                lambda: check_vec_add_kernel(ask, 19, 4, 5, blocks=2, kernel_name="vec_add_grid_stride"),
            ),
        ],
    )


def self_check_tiled_matmul(tiled_matmul, launch_tiled_matmul) -> bool:
    return _self_check(
        "tiled_matmul",
        dict(tiled_matmul=tiled_matmul, launch_tiled_matmul=launch_tiled_matmul),
        lambda ask: [
            ("launch config for C 20 x 40", lambda: check_matmul_launch(ask, 20, 8, 40)),
            ("one tile: 16 x 16 @ 16 x 16", lambda: check_matmul_results(ask, 16, 16, 16)),
            ("ragged edges and two tiles of K: 5 x 20 @ 20 x 3", lambda: check_matmul_results(ask, 5, 20, 3)),
            (
                "global traffic of a tiled kernel: 16 x 48 @ 48 x 16",
                lambda: print_traffic(check_matmul_traffic(ask, 16, 48, 16)),
            ),
        ],
    )


def print_traffic(fig: dict) -> None:
    print(
        f"    global reads {fig['global_reads']} (tiled bound {fig['tiled_bound']}, naive {fig['naive']}), "
        f"shared reads {fig['shared_reads']}, threads {fig['threads']}"
    )


def self_check_histogram(histogram_kernel, launch_histogram) -> bool:
    return _self_check(
        "histogram",
        dict(histogram_kernel=histogram_kernel, launch_histogram=launch_histogram),
        lambda ask: [
            ("300 values into 7 bins, 64 threads/block (a tail)", lambda: check_histogram(ask, 300, 7, 64)),
            ("every value in one bin: 40 values, 1 bin", lambda: check_histogram(ask, 40, 1, 32)),
            ("threads_per_block defaults to 256: 600 values, 10 bins", lambda: check_histogram(ask, 600, 10, None)),
            ("no data: n = 0 launches nothing and returns zeros", lambda: check_histogram(ask, 0, 5, 32)),
            ("called twice: each call counts from zero", lambda: check_histogram(ask, 50, 4, 16, calls=2)),
        ],
    )


def self_check_dot_reduction(dot_kernel, launch_dot) -> bool:
    return _self_check(
        "dot_reduction",
        dict(dot_kernel=dot_kernel, launch_dot=launch_dot),
        lambda ask: [
            ("n = 64, one block of 64 threads", lambda: check_dot(ask, 64, 64)),
            ("n = 1000, blocks of 256 (a tail of 232)", lambda: check_dot(ask, 1000, 256)),
            ("n = 5, blocks of 8, float32 inputs", lambda: check_dot(ask, 5, 8, "float32")),
            ("n = 1500, blocks of 1024 (the largest block)", lambda: check_dot(ask, 1500, 1024)),
            ("threads_per_block defaults to 256: n = 300", lambda: check_dot(ask, 300, None)),
            ("no data: n = 0 launches nothing and returns 0.0", lambda: check_dot(ask, 0, 32)),
        ],
    )
