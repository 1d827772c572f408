"""Checks of the notebook-02 kernels (vecAdd, grid-stride vecAdd, tiled matmul).

Each ``check_*`` function runs one case and raises :class:`CheckFailed` with a message that says
what is wrong and how to replay it; it returns figures when the case passes. They run either on
the checking simulator of :mod:`ch13lib.cuda_sim` (``device="cpu"``), or on a real GPU through
numba.cuda with cupy device arrays (``device="gpu"``). The hidden graders call the same checks on
more (and hidden) cases; the ``self_check_*`` functions at the bottom run a few small ones for you.

Inputs are made by :func:`vec_inputs` and :func:`mat_inputs`, so a failing case replays exactly:
``a, b = vec_inputs(37, "float32"); launch_vec_add(a, b, 16)``.
"""
from __future__ import annotations


import numpy as np

from ch13lib.cuda_sim import KernelFault, Spy, launch, python_function, spying

TILE = 16                      # the tiled matmul's tile edge (the notebook's module constant)
SENTINEL = -7                  # what the grader puts in output cells a kernel must not touch


class CheckFailed(AssertionError):
    """A case failed; the message says why and how to replay it."""


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
    bad = np.argwhere(got != want)
    idx = tuple(int(v) for v in bad[0])
    where = idx[0] if len(idx) == 1 else idx
    return (f"{len(bad)} of {want.size} elements are wrong; the first is [{', '.join(map(str, idx))}]: "
            f"got {got[idx]!r}, expected {want[idx]!r}") if len(bad) else ""


def _unwritten(writer: np.ndarray, limit=None) -> str:
    w = writer if limit is None else writer[:limit]
    missing = np.argwhere(w < 0)
    if not len(missing):
        return ""
    first = [tuple(int(v) for v in m) for m in missing[:5]]
    shown = ", ".join(str(f[0]) if len(f) == 1 else str(f) for f in first)
    return f"{len(missing)} element(s) of the output were never written by any thread (first: {shown})"


def _replay(call: str) -> str:
    return f"\nReplay it: from ch13lib.cuda_check import vec_inputs, mat_inputs; {call}"


def _no_launch_msg(name, launcher):
    return (f"{launcher} never launched the kernel `{name}` (it must launch it as "
            f"{name}[blocks, threads_per_block](...), using the global name `{name}`)")


def _check_returned(c, n_shape, dtype, a, b, name):
    if not isinstance(c, np.ndarray):
        raise CheckFailed(f"{name} returned {type(c).__name__}, not a numpy array: copy the result back "
                          f"to the host (d_c.copy_to_host()) and return it")
    if c.shape != n_shape:
        raise CheckFailed(f"{name} returned an array of shape {c.shape}, expected {n_shape}")
    if c.dtype != np.dtype(dtype):
        raise CheckFailed(f"{name} returned dtype {c.dtype}, expected {np.dtype(dtype)} (the inputs' dtype): "
                          f"make the output like the inputs (np.empty_like(a))")
    for arr, nm in ((a, "a"), (b, "b")):
        if c.size and np.shares_memory(c, arr):
            raise CheckFailed(f"{name} returned an array that shares memory with its input {nm}: return a NEW "
                              f"array and leave the inputs unchanged")


def _fault_failed(e: KernelFault, replay: str) -> CheckFailed:
    return CheckFailed(f"{e.message}{_replay(replay)}")


# ---------------------------------------------------------------------------------------------
# vecAdd


def check_vec_add_launch(launch_fn, n: int, tpb: int, dtype="float32", *, kernel_name="vec_add",
                         launcher="launch_vec_add", blocks: int | None = None, default_tpb: bool = False) -> tuple:
    """One launch, ``tpb`` threads per block, the fewest blocks that cover n (or exactly ``blocks``).
    ``default_tpb``: call the launcher without threads_per_block (its default must be ``tpb``)."""
    a, b = vec_inputs(n, dtype)
    spy = Spy(None, kernel_name, "record")
    args = (a, b) if default_tpb else (a, b, tpb) if blocks is None else (a, b, blocks, tpb)
    call = f"a, b = vec_inputs({n}, {str(np.dtype(dtype))!r}); {launcher}({', '.join(['a', 'b', *map(str, args[2:])])})"
    with spying(launch_fn, kernel_name, spy):
        launch_fn(*args)
    want_blocks = blocks if blocks is not None else -(-n // tpb)
    launches = spy.launches
    if n == 0 and not launches:
        return (0,)         # nothing to do: not launching at all is right
    if not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if len(launches) > 1:
        raise CheckFailed(f"{launcher} launched {kernel_name} {len(launches)} times for n={n}: launch it once, "
                          f"with enough blocks for every element" + _replay(call))
    g, bd = launches[0][:2]
    raw_g, raw_b = spy.raw_configs[0]
    if g is None:
        zero = ""
        if n == 0:
            zero = (" For n == 0 the formula gives 0 blocks, which a GPU refuses: return an empty array "
                    "without launching.")
        raise CheckFailed(f"{launcher} launched {kernel_name}[{raw_g!r}, {raw_b!r}]: not a valid launch "
                          f"configuration (blocks and threads per block must be integers >= 1).{zero}"
                          + _replay(call))
    if bd != (tpb, 1, 1):
        asked = (f"called without threads_per_block, whose default must be {tpb}" if default_tpb else
                 f"threads_per_block={tpb} was asked for")
        raise CheckFailed(f"{launcher} launched blocks of {bd[0] * bd[1] * bd[2]} threads (blockdim {raw_b!r}); "
                          f"{asked}" + _replay(call))
    if n == 0 and blocks is None:
        return g[:1]
    if g[1:] != (1, 1) or g[0] != want_blocks:
        if blocks is not None:
            raise CheckFailed(f"{launcher} launched {raw_g!r} blocks; blocks={blocks} was asked for: use the "
                              f"grid the caller chose (the loop covers any n)" + _replay(call))
        few = g[0] * tpb < n
        why = (f"{g[0]} blocks x {tpb} threads = {g[0] * tpb} threads cannot cover n = {n} elements: the tail "
               f"is never computed. Round up: blocks = (n + threads_per_block - 1) // threads_per_block"
               if few else
               f"{g[0]} blocks of {tpb} threads for n = {n}: {g[0] - want_blocks} block(s) have no element "
               f"to work on. Use blocks = (n + threads_per_block - 1) // threads_per_block = {want_blocks}")
        raise CheckFailed(f"{launcher} launched {kernel_name}[{raw_g!r}, {raw_b!r}]: {why}" + _replay(call))
    return g[:1]


def _run_vec_launcher(launch_fn, n, tpb, dtype, device, kernel_name, launcher, blocks=None):
    a, b = vec_inputs(n, dtype)
    a0, b0 = a.copy(), b.copy()
    args = (a, b, tpb) if blocks is None else (a, b, blocks, tpb)
    call = f"a, b = vec_inputs({n}, {str(np.dtype(dtype))!r}); {launcher}({', '.join(['a', 'b', *map(str, args[2:])])})"
    spy = Spy(None, kernel_name, "check" if device == "cpu" else "pass", readonly=(0, 1))
    try:
        with spying(launch_fn, kernel_name, spy):
            c = launch_fn(*args)
    except KernelFault as e:
        raise _fault_failed(e, call) from None
    return a, b, a0, b0, c, spy, call


def check_vec_add_results(launch_fn, n: int, tpb: int, dtype="float32", device="cpu", *,
                          kernel_name="vec_add", launcher="launch_vec_add", blocks=None) -> dict:
    """The launcher returns a new array equal to a + b; the kernel faults nowhere; inputs unchanged."""
    a, b, a0, b0, c, spy, call = _run_vec_launcher(launch_fn, n, tpb, dtype, device, kernel_name,
                                                   launcher, blocks)
    for arr, orig, nm in ((a, a0, "a"), (b, b0, "b")):
        if not np.array_equal(arr, orig):
            raise CheckFailed(f"{launcher} changed its input {nm} ({_first_diff(arr, orig)}): the inputs must "
                              f"stay as they were" + _replay(call))
    if n > 0 and not spy.launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if device == "cpu" and spy.launches:
        for _, _, rec in spy.launches:
            out = rec.writers.get(_param(launch_fn, kernel_name, 2))
            if out is not None and out.shape == (n,):
                miss = _unwritten(out)
                if miss:
                    raise CheckFailed(f"after {kernel_name}: {miss}. Every index 0 <= i < n needs a thread: "
                                      f"is the block index part of i, and are there enough blocks?"
                                      + _replay(call))
    _check_returned(c, (n,), dtype, a, b, launcher)
    want = a0 + b0
    if not np.array_equal(c, want):
        raise CheckFailed(f"{launcher} returned wrong values: {_first_diff(c, want)}" + _replay(call))
    return {"launches": len(spy.launches)}


def _param(launch_fn, kernel_name, pos):
    """The name of the kernel's parameter at ``pos`` (for reading the launch's writer maps)."""
    kernel = launch_fn.__globals__.get(kernel_name)
    try:
        code = python_function(kernel).__code__
        return code.co_varnames[pos]
    except (KernelFault, IndexError, AttributeError):
        return None


def check_vec_add_kernel(kernel, n: int, tpb: int, extra: int = 3, dtype="float32", device="cpu", *,
                         kernel_name="vec_add", blocks: int | None = None) -> dict:
    """Launch the kernel directly on arrays LONGER than n (n + extra), with more threads than n.

    No thread may touch index n or beyond (the buffers go on, so only ``n`` tells the kernel
    where to stop); c[:n] == a + b; c[n:] and the inputs untouched.
    """
    size = n + extra
    a, b = vec_inputs(size, dtype)
    a0, b0 = a.copy(), b.copy()
    c = np.full(size, SENTINEL, dtype)
    if blocks is None:
        blocks = -(-n // tpb) + 1          # one whole block more than needed
    call = (f"a, b = vec_inputs({size}, {str(np.dtype(dtype))!r}); c = np.full({size}, {SENTINEL}, a.dtype); "
            f"{kernel_name}[{blocks}, {tpb}](a, b, c, {n})  # buffers of {size}, n = {n}")
    if device == "cpu":
        try:
            rec = launch(kernel, blocks, tpb, (a, b, c, n), readonly=(0, 1), limits={0: n, 1: n, 2: n})
        except KernelFault as e:
            raise _fault_failed(e, call) from None
        miss = _unwritten(rec.writers[python_function(kernel).__code__.co_varnames[2]], n)
        if miss:
            raise CheckFailed(f"{kernel_name}[{blocks}, {tpb}] with n = {n}: {miss}" + _replay(call))
    else:
        import cupy as cp
        da, db, dc = cp.asarray(a), cp.asarray(b), cp.asarray(c)
        kernel[blocks, tpb](da, db, dc, n)
        cp.cuda.runtime.deviceSynchronize()
        a, b, c = cp.asnumpy(da), cp.asnumpy(db), cp.asnumpy(dc)
        rec = None
    for arr, orig, nm in ((a, a0, "a"), (b, b0, "b")):
        if not np.array_equal(arr, orig):
            raise CheckFailed(f"{kernel_name} changed its input {nm} ({_first_diff(arr, orig)})" + _replay(call))
    tail = c[n:]
    if not np.all(tail == SENTINEL):
        i = int(np.argwhere(tail != SENTINEL)[0][0]) + n
        raise CheckFailed(f"{kernel_name} wrote c[{i}] although n = {n}: no thread may write at index >= n "
                          f"(guard with `if i < n`, using n, not the array's size)" + _replay(call))
    want = a0[:n] + b0[:n]
    if not np.array_equal(c[:n], want):
        raise CheckFailed(f"{kernel_name} computed wrong values: {_first_diff(c[:n], want)}" + _replay(call))
    return {"threads": blocks * tpb, "record": rec}


def check_launcher_as_is(launch_fn, n: int, tpb: int, dtype="float32", *, launcher="launch_vec_add",
                         blocks=None) -> None:
    """Run the launcher unchanged, on whatever numba.cuda is in this process (numba's own simulator
    on a CPU, the GPU on a GPU machine), and compare with numpy."""
    a, b = vec_inputs(n, dtype)
    a0, b0 = a.copy(), b.copy()
    args = (a, b, tpb) if blocks is None else (a, b, blocks, tpb)
    call = f"a, b = vec_inputs({n}, {str(np.dtype(dtype))!r}); {launcher}({', '.join(['a', 'b', *map(str, args[2:])])})"
    c = launch_fn(*args)
    if not (np.array_equal(a, a0) and np.array_equal(b, b0)):
        raise CheckFailed(f"{launcher} changed its inputs on numba's backend" + _replay(call))
    _check_returned(c, (n,), dtype, a, b, launcher)
    if not np.array_equal(c, a0 + b0):
        raise CheckFailed(f"on numba's own backend {launcher} returned wrong values: "
                          f"{_first_diff(c, a0 + b0)}" + _replay(call))


def check_grid_stride_pattern(launch_fn, n: int, blocks: int, tpb: int, dtype="float32", *,
                              kernel_name="vec_add_grid_stride",
                              launcher="launch_vec_add_grid_stride") -> None:
    """Element i is computed by global thread i % (blocks * threads_per_block): the grid-stride
    loop, in which neighbouring threads touch neighbouring elements (coalesced accesses)."""
    a, b, a0, b0, c, spy, call = _run_vec_launcher(launch_fn, n, tpb, dtype, "cpu", kernel_name, launcher,
                                                   blocks)
    if not spy.launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    rec = spy.launches[0][2]
    out = rec.writers.get(_param(launch_fn, kernel_name, 2))
    if out is None or out.shape != (n,):
        raise CheckFailed(f"{kernel_name} must write its third argument c (length n)" + _replay(call))
    stride = rec.griddim[0] * rec.blockdim[0]
    want = np.arange(n) % stride
    bad = np.argwhere(out != want)
    if len(bad):
        i = int(bad[0][0])
        who = "no thread" if out[i] < 0 else f"global thread {int(out[i])}"
        raise CheckFailed(
            f"not a grid-stride loop: c[{i}] was written by {who}, but in a grid-stride loop global thread "
            f"i % (blocks * threads_per_block) = {i % stride} computes it (start at cuda.grid(1), step by "
            f"cuda.gridsize(1)). Neighbouring threads then touch neighbouring elements, which a GPU "
            f"coalesces into one memory transaction." + _replay(call))


# ---------------------------------------------------------------------------------------------
# tiled matmul


def _mm_call(m, k, n, launcher="launch_tiled_matmul"):
    return f"A, B = mat_inputs({m}, {k}, {n}); {launcher}(A, B)"


def check_matmul_launch(launch_fn, m: int, k: int, n: int, *, kernel_name="tiled_matmul",
                        launcher="launch_tiled_matmul") -> tuple:
    """One launch of TILE x TILE blocks, just enough of them to cover C (m x n)."""
    A, B = mat_inputs(m, k, n)
    spy = Spy(None, kernel_name, "record")
    call = _mm_call(m, k, n, launcher)
    with spying(launch_fn, kernel_name, spy):
        launch_fn(A, B)
    if not spy.launches:
        if m == 0 or n == 0:
            return ()
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if len(spy.launches) > 1:
        raise CheckFailed(f"{launcher} launched {kernel_name} {len(spy.launches)} times: launch it once, "
                          f"with a 2-D grid of tiles" + _replay(call))
    g, bd = spy.launches[0][:2]
    raw_g, raw_b = spy.raw_configs[0]
    if g is None:
        raise CheckFailed(f"{launcher} launched {kernel_name}[{raw_g!r}, {raw_b!r}]: not a valid launch "
                          f"configuration (integers >= 1)" + _replay(call))
    if bd != (TILE, TILE, 1):
        raise CheckFailed(f"{launcher} launched blocks of shape {raw_b!r}: each block computes one "
                          f"TILE x TILE tile of C, so blockdim must be (TILE, TILE) = ({TILE}, {TILE})"
                          + _replay(call))
    tiles_n, tiles_m = -(-n // TILE), -(-m // TILE)
    if g not in ((tiles_n, tiles_m, 1), (tiles_m, tiles_n, 1)):
        raise CheckFailed(f"{launcher} launched a grid of {raw_g!r} blocks for C of shape ({m}, {n}): it needs "
                          f"ceil({n}/{TILE}) = {tiles_n} blocks along the columns (x) and ceil({m}/{TILE}) = "
                          f"{tiles_m} along the rows (y), i.e. ({tiles_n}, {tiles_m})" + _replay(call))
    return g


def check_matmul_results(launch_fn, m: int, k: int, n: int, device="cpu", *, kernel_name="tiled_matmul",
                         launcher="launch_tiled_matmul"):
    """C = A @ B exactly (small integers in float32); no faults, races or divergent barriers."""
    A, B = mat_inputs(m, k, n)
    A0, B0 = A.copy(), B.copy()
    call = _mm_call(m, k, n, launcher)
    spy = Spy(None, kernel_name, "check" if device == "cpu" else "pass", readonly=(0, 1))
    try:
        with spying(launch_fn, kernel_name, spy):
            C = launch_fn(A, B)
    except KernelFault as e:
        raise _fault_failed(e, call) from None
    if not (np.array_equal(A, A0) and np.array_equal(B, B0)):
        raise CheckFailed(f"{launcher} changed its input A or B: they must stay as they were" + _replay(call))
    if m and n and not spy.launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    rec = spy.launches[0][2] if spy.launches else None
    if rec is not None:
        out = rec.writers.get(_param(launch_fn, kernel_name, 2))
        if out is not None and out.shape == (m, n):
            miss = _unwritten(out)
            if miss:
                raise CheckFailed(f"after {kernel_name}: {miss}. Each thread computes C[row, col] with "
                                  f"row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + "
                                  f"threadIdx.x" + _replay(call))
    want = (A0.astype(np.float64) @ B0.astype(np.float64)).astype(np.float32)
    if not isinstance(C, np.ndarray):
        raise CheckFailed(f"{launcher} returned {type(C).__name__}, not a numpy array" + _replay(call))
    if C.shape != (m, n):
        raise CheckFailed(f"{launcher} returned shape {C.shape}, expected ({m}, {n})" + _replay(call))
    if C.dtype != np.float32:
        raise CheckFailed(f"{launcher} returned dtype {C.dtype}, expected float32" + _replay(call))
    if not np.array_equal(C, want):
        hint = ""
        if k > TILE:
            hint = (f" With K = {k} > TILE the sum runs over {-(-k // TILE)} tiles: load a new pair of "
                    f"tiles of A and B for each one (the chapter's kernel loads one tile only).")
        raise CheckFailed(f"{launcher} returned a wrong C = A @ B: {_first_diff(C, want)}.{hint}"
                          + _replay(call))
    return rec


def check_matmul_traffic(launch_fn, m: int, k: int, n: int, *, kernel_name="tiled_matmul",
                         launcher="launch_tiled_matmul") -> dict:
    """Global traffic of a tiled kernel: each block reads each needed tile of A and B once, so no
    more than 2 * TILE * TILE * ceil(K / TILE) global reads per block in all, and every thread
    writes C once (accumulating in a register). A naive kernel reads 2 * K per thread."""
    rec = check_matmul_results(launch_fn, m, k, n, "cpu", kernel_name=kernel_name, launcher=launcher)
    call = _mm_call(m, k, n, launcher)
    blocks = rec.griddim[0] * rec.griddim[1] * rec.griddim[2]
    tiles = -(-k // TILE)
    bound = blocks * 2 * TILE * TILE * tiles
    reads = rec.total("global_reads")
    naive = blocks * TILE * TILE * 2 * k
    figures = {"global_reads": reads, "tiled_bound": bound, "naive": naive,
               "shared_reads": rec.total("shared_reads"), "threads": rec.n_threads}
    if reads > bound:
        worst = rec.most("global_reads")
        raise CheckFailed(
            f"{kernel_name} read global memory {reads} times for A ({m}x{k}) @ B ({k}x{n}); a tiled kernel "
            f"reads at most {bound} (each of the {blocks} block(s) loads {tiles} tile(s) of A and of B, one "
            f"element per thread per tile); a naive kernel reads {naive}. Thread {worst.thread[:2]} of block "
            f"{worst.block[:2]} made {worst.global_reads} global reads. Inside the k loop read only the shared "
            f"tiles, and keep the running sum in a local variable." + _replay(call))
    worst = rec.most("global_writes")
    if worst is not None and worst.global_writes > 1:
        raise CheckFailed(
            f"thread {worst.thread[:2]} of block {worst.block[:2]} wrote global memory {worst.global_writes} "
            f"times: accumulate the sum in a local variable and write C[row, col] once, at the end"
            + _replay(call))
    return figures


# ---------------------------------------------------------------------------------------------
# self-checks for the notebook


def _grading_line(name) -> bool:
    """While nbgrader autograde runs the notebook, print one line and stand aside."""
    from ch13lib import grading
    if grading():
        print(f"{name}: self-check skipped while grading (the hidden tests decide)")
        return True
    return False


def _run_checks(title, checks) -> None:
    print(title)
    ok = True
    for label, fn in checks:
        try:
            fn()
        except NotImplementedError:
            print(f"  ✘ {label}: not implemented yet (the stub still raises NotImplementedError)")
            return
        except CheckFailed as e:
            print(f"  ✘ {label}: {e}")
            ok = False
        except Exception as e:      # noqa: BLE001 - the student's code crashed
            print(f"  ✘ {label}: your code raised {type(e).__name__}: {e}")
            ok = False
        else:
            print(f"  ✔ {label}")
    print("All self-checks passed (the hidden tests try many more sizes)." if ok else
          "Fix the ✘ lines above; each says how to replay the failing case.")


def self_check_vec_add(vec_add, launch_vec_add) -> None:
    if _grading_line("vec_add"):
        return
    _run_checks("vec_add self-check (checking simulator):", [
        ("launch config: n=1000, 256 threads/block -> 4 blocks", lambda: check_vec_add_launch(launch_vec_add, 1000, 256)),
        ("tail: n=37, 16 threads/block", lambda: check_vec_add_results(launch_vec_add, 37, 16)),
        ("n=1 with 1024 threads/block, int32", lambda: check_vec_add_results(launch_vec_add, 1, 1024, "int32")),
        ("n=0 returns an empty array", lambda: check_vec_add_results(launch_vec_add, 0, 32)),
        ("kernel touches nothing at i >= n (buffers longer than n)",
         lambda: check_vec_add_kernel(vec_add, 20, 8)),
    ])


def self_check_vec_add_grid_stride(vec_add_grid_stride, launch_vec_add_grid_stride) -> None:
    if _grading_line("vec_add_grid_stride"):
        return
    kw = dict(kernel_name="vec_add_grid_stride", launcher="launch_vec_add_grid_stride")
    _run_checks("vec_add_grid_stride self-check (checking simulator):", [
        ("launches exactly blocks x threads", lambda: check_vec_add_launch(launch_vec_add_grid_stride, 50, 8, blocks=2, **kw)),
        ("grid smaller than n: 2 blocks x 8 threads, n=50",
         lambda: check_vec_add_results(launch_vec_add_grid_stride, 50, 8, blocks=2, **kw)),
        ("grid larger than n: 3 blocks x 8 threads, n=5",
         lambda: check_vec_add_results(launch_vec_add_grid_stride, 5, 8, blocks=3, **kw)),
        ("grid-stride pattern (coalesced)", lambda: check_grid_stride_pattern(launch_vec_add_grid_stride, 40, 2, 4)),
    ])


def self_check_tiled_matmul(tiled_matmul, launch_tiled_matmul) -> None:
    if _grading_line("tiled_matmul"):
        return
    _run_checks("tiled_matmul self-check (checking simulator):", [
        ("launch config for C 20 x 40", lambda: check_matmul_launch(launch_tiled_matmul, 20, 8, 40)),
        ("one tile: 16 x 16 @ 16 x 16", lambda: check_matmul_results(launch_tiled_matmul, 16, 16, 16)),
        ("ragged edges and two tiles of K: 5 x 20 @ 20 x 3",
         lambda: check_matmul_results(launch_tiled_matmul, 5, 20, 3)),
        ("global traffic of a tiled kernel: 16 x 48 @ 48 x 16",
         lambda: print_traffic(check_matmul_traffic(launch_tiled_matmul, 16, 48, 16))),
    ])


def print_traffic(fig: dict) -> None:
    print(f"    global reads {fig['global_reads']} (tiled bound {fig['tiled_bound']}, naive {fig['naive']}), "
          f"shared reads {fig['shared_reads']}, threads {fig['threads']}")
