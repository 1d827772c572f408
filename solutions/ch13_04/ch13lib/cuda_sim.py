"""A checking CUDA simulator for small kernels: deterministic, and strict where a GPU is silent.

numba's own simulator (``NUMBA_ENABLE_CUDASIM=1``) runs every kernel thread as an OS thread,
polls them in a busy loop, lets numpy wrap negative indices silently, never notices a missing
``cuda.syncthreads()`` (the result is only wrong when the OS happens to schedule the threads
badly) and hands out shared memory that is already zero. This module runs the same Python kernel
function (``kernel.py_func`` of a ``@cuda.jit`` kernel) on a simulator that

* runs the threads of a block one at a time, in ``threadIdx`` order, switching only at
  ``cuda.syncthreads()`` — the same interleaving on every run;
* checks every array access: indices out of bounds, negative indices (which numpy and numba
  silently wrap), non-integer indices, writes to arrays marked read-only (the inputs), and
  accesses beyond a logical length ``n`` even where the buffer is longer;
* records who wrote each element of a global array, so two threads writing one element and
  elements nobody wrote are reported by name;
* finds missing barriers deterministically: two threads touching one shared-memory cell in the
  same barrier phase, at least one of them writing, is a data race whatever the schedule;
  reading shared memory nobody has written is reading garbage; a thread that returns while the
  rest of its block waits at ``syncthreads`` is barrier divergence;
* counts, per thread, global and shared reads and writes (the memory traffic a tiled kernel
  saves).

It ships with the notebooks (the self-checks use it) and the hidden graders use it too.
"""

from __future__ import annotations

import _thread
import dataclasses
import math
import sys
import threading
import types
from collections.abc import Callable, Sequence

import numpy as np

try:  # simulated threads as greenlets: no OS threads, so no per-user thread limit, and faster
    import greenlet as _greenlet
except ImportError:  # pragma: no cover - then OS threads, handing control over with locks
    _greenlet = None

WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_SIMULATED_THREADS = 200_000  # beyond this a launch is refused: the simulator is for small grids
MAX_GLOBAL_ACCESSES_PER_THREAD = 200_000  # a thread past this is stuck in an endless loop (a step budget)
ATOMIC = -3  # in a global array's writer list: the element was updated with cuda.atomic (by any thread)
LOG_CAP = 8_000  # accesses kept per block for the picture of a fault (ch13lib/pictures.py)


class KernelFault(Exception):
    """The kernel did something a GPU would not forgive (or would silently get wrong)."""

    def __init__(self, message: str, kind: str = "fault") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


class _Abort(BaseException):
    """Unwinds a simulated thread after another thread of the launch has faulted."""


class _NeedThreads(BaseException):
    """An inline run met syncthreads: rerun the launch with suspendable threads."""


# ---------------------------------------------------------------------------------------------
# dimensions


class Dim3:
    __slots__ = ("x", "y", "z")

    def __init__(self, x: int, y: int = 1, z: int = 1) -> None:
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self) -> str:
        return f"({self.x}, {self.y}, {self.z})"


def normalize_dims(griddim, blockdim) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Check a launch configuration as a GPU would; raise KernelFault with the reason."""

    def norm(dim, name):
        dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
        if not 1 <= len(dims) <= 3:
            raise KernelFault(f"{name} must be 1 to 3 integers, got {dim!r}", "config")
        for v in dims:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise KernelFault(
                    f"{name} must be integers, got {dim!r} (a {type(v).__name__}): use // or math.ceil, not /", "config"
                )
            if v < 1:
                raise KernelFault(
                    f"{name} {dim!r} has a dimension below 1: a GPU refuses such a launch "
                    f"(CUDA_ERROR_INVALID_VALUE). With nothing to do (n == 0), do not launch.",
                    "config",
                )
        dims = [int(v) for v in dims] + [1] * (3 - len(dims))
        return tuple(dims)

    g, b = norm(griddim, "griddim (blocks)"), norm(blockdim, "blockdim (threads per block)")
    if b[0] * b[1] * b[2] > MAX_THREADS_PER_BLOCK:
        raise KernelFault(
            f"blockdim {blockdim!r} has {b[0] * b[1] * b[2]} threads: a block holds at most {MAX_THREADS_PER_BLOCK}",
            "config",
        )
    return g, b


def _fmt3(d: Sequence[int], ndim: int) -> str:
    d = tuple(d)[: max(ndim, 1)]
    return str(d[0]) if len(d) == 1 else "(" + ", ".join(map(str, d)) + ")"


# ---------------------------------------------------------------------------------------------
# simulated threads and the launch


@dataclasses.dataclass
class ThreadStats:
    block: tuple[int, int, int]
    thread: tuple[int, int, int]
    global_reads: int = 0
    global_writes: int = 0
    shared_reads: int = 0
    shared_writes: int = 0


class _SimThread:
    __slots__ = (
        "launch",
        "blockIdx",
        "threadIdx",
        "tid",
        "gid",
        "epoch",
        "state",
        "exc",
        "worker",
        "stats",
        "shared_calls",
        "abort",
        "last_read",
    )

    def __init__(self, launch, block, thread, tid, gid):
        self.launch = launch
        self.blockIdx = Dim3(*block)
        self.threadIdx = Dim3(*thread)
        self.tid = tid  # linear index in the block
        self.gid = gid  # linear index in the grid
        self.epoch = 0  # barrier phase
        self.state = "new"  # new | barrier | done | error
        self.exc = None
        self.worker = None
        self.stats = ThreadStats(block, thread)
        self.shared_calls: dict = {}
        self.abort = False
        self.last_read = None  # (writer list, flat position) of the last global element read

    def where(self) -> str:
        nd = self.launch.ndim
        return (
            f"thread {_fmt3(tuple(self.threadIdx), nd)} of block {_fmt3(tuple(self.blockIdx), nd)}"
            f" (threadIdx{'.x' if nd == 1 else ''}={_fmt3(tuple(self.threadIdx), nd)},"
            f" blockIdx{'.x' if nd == 1 else ''}={_fmt3(tuple(self.blockIdx), nd)})"
        )


_current: _SimThread | None = None  # the one simulated thread running now
_launch_lock = threading.Lock()  # one launch at a time (the current-thread pointer is global)


def _fault(message: str, kind: str):
    """Record the first fault of the launch and raise it in the running thread."""
    t = _current
    launch = t.launch
    fault = KernelFault(f"{t.where()}: {message}", kind)
    fault.thread = t.gid
    if launch.fault is None:
        launch.fault = fault
    raise fault


# ---------------------------------------------------------------------------------------------
# arrays


def _index_tuple(idx, arr_name):
    if isinstance(idx, tuple):
        items = idx
    else:
        items = (idx,)
    out = []
    for i in items:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            if isinstance(i, slice):
                _fault(
                    f"sliced {arr_name}[...]: the checking simulator only supports integer indices "
                    f"in kernels (index one element at a time)",
                    "index",
                )
            _fault(f"indexed {arr_name} with {i!r} (a {type(i).__name__}): array indices must be integers", "index")
        out.append(int(i))
    return out


_TWO_BARRIERS = (
    "A cuda.syncthreads() must stand between one thread's write of a shared cell and another "
    "thread's read or write of it: in a tiled kernel two per tile (after loading it, before any thread "
    "reads it, and after computing with it, before the next tile overwrites it); in a reduction tree "
    "one after the load and one after every level."
)


class SimArray:
    """A global or shared array as a kernel sees it, every access checked and counted.

    Bookkeeping lives in Python lists indexed by the element's flat position in the base array
    (row views such as ``A[row]`` share them with an offset): writer thread of each global element;
    for shared memory, whether it was ever written and who wrote / read it in which barrier phase.
    """

    __slots__ = (
        "_arr",
        "_name",
        "_space",
        "_readonly",
        "_limit",
        "_writer",
        "_state",
        "shape",
        "ndim",
        "size",
        "dtype",
        "_prefix",
        "_off",
        "_estr",
    )

    def __init__(
        self,
        arr: np.ndarray,
        name: str,
        space: str = "global",
        *,
        readonly: bool = False,
        limit: int | None = None,
        writer: list | None = None,
        state=None,
        prefix=(),
        off=0,
        estr=None,
    ):
        self._arr = arr
        self._name = name
        self._space = space
        self._readonly = readonly
        self._limit = limit  # logical length (1-D): accesses at >= limit are faults
        self._writer = writer  # global: gid of the writing thread per flat position, -1 none
        self._state = state  # shared: [init, w_epoch, writer, r_epoch, reader] lists
        self._prefix = prefix  # indices already applied (for messages)
        self._off = off  # flat position of this view's first element in the base
        if estr is None:  # element strides of a C-ordered base
            estr, acc = [], 1
            for d in reversed(arr.shape):
                estr.append(acc)
                acc *= d
            estr = tuple(reversed(estr))
        self._estr = estr
        self.shape = arr.shape
        self.ndim = arr.ndim
        self.size = arr.size
        self.dtype = arr.dtype

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"<{self._space} array {self._name} shape={self.shape} dtype={self.dtype}>"

    def _label(self, idx) -> str:
        full = list(self._prefix) + list(idx)
        return f"{self._name}[{', '.join(map(str, full))}]"

    def _locate(self, key, what):
        """(index tuple, flat position); faults on a bad index. Fast path first."""
        idx = key if type(key) is tuple else (key,)
        shape = self.shape
        if len(idx) == len(shape):
            pos = self._off
            estr = self._estr
            d = 0
            for i in idx:
                if type(i) is not int or i < 0 or i >= shape[d]:
                    break
                pos += i * estr[d]
                d += 1
            else:
                if self._limit is None or idx[0] < self._limit:
                    return idx, pos
        idx = self._check(key, what)
        pos = self._off
        for d, i in enumerate(idx):
            pos += i * self._estr[d]
        return idx, pos

    def _check(self, key, what):
        idx = _index_tuple(key, self._name)
        if len(idx) > self.ndim:
            _fault(
                f"{what} {self._label(idx)}: {self._name} has only {self.ndim + len(self._prefix)} dimension(s)",
                "index",
            )
        for d, i in enumerate(idx):
            if i < 0:
                _current.launch.bad_index = [self._name, self._space, list(self._prefix) + list(idx)]
                _fault(
                    f"{what} {self._label(idx)}: negative index. numpy and numba silently wrap it to "
                    f"the other end of the array (index {i} + {self.shape[d]}); on a GPU it is a read or "
                    f"write outside the array. Check your index arithmetic.",
                    "negative",
                )
            if i >= self.shape[d]:
                _current.launch.bad_index = [self._name, self._space, list(self._prefix) + list(idx)]
                _fault(
                    f"{what} {self._label(idx)}: out of bounds for {self._space} array {self._name} "
                    f"of shape {tuple(self.shape)}{' (a missing bounds check?)' if self._space == 'global' else ''}",
                    "bounds",
                )
        if self._limit is not None and idx and idx[0] >= self._limit:
            _current.launch.bad_index = [self._name, self._space, list(self._prefix) + list(idx)]
            _fault(
                f"{what} {self._label(idx)} although n = {self._limit}: the array is longer than n here, "
                f"and no thread may touch element n or beyond. Guard with `if i < n`, using n, not the "
                f"array's size.",
                "bounds",
            )
        return tuple(idx)

    def __getitem__(self, key):
        idx, pos = self._locate(key, "read")
        if len(idx) < self.ndim:  # a row view, e.g. A[row][k]
            return SimArray(
                self._arr[idx],
                self._name,
                self._space,
                readonly=self._readonly,
                writer=self._writer,
                state=self._state,
                prefix=self._prefix + idx,
                off=pos,
                estr=self._estr[len(idx) :],
            )
        t = _current
        if self._space == "global":
            t.stats.global_reads += 1
            if t.stats.global_reads > MAX_GLOBAL_ACCESSES_PER_THREAD:
                _endless(t)
            t.last_read = (self._writer, pos)
        else:
            t.stats.shared_reads += 1
            init, w_epoch, writer, r_epoch, reader = self._state
            e = t.epoch
            if not init[pos]:
                # Judged at the end of the phase: if another thread writes the cell later in this
                # phase, that write reports a race (a missing barrier); otherwise it is garbage.
                t.launch.pending_uninit.append(f"{t.where()}: read {self._label(idx)}")
            if w_epoch[pos] == e and writer[pos] != t.tid:
                other = t.launch.thread_name(t, writer[pos])
                _fault(
                    f"read {self._label(idx)} in the same phase as {other} wrote it, with no "
                    f"cuda.syncthreads() between the write and the read: a data race (on a GPU it "
                    f"reads the old or the new value, by luck). " + _TWO_BARRIERS,
                    "race",
                )
            if r_epoch[pos] != e:
                r_epoch[pos] = e
                reader[pos] = t.tid
            elif reader[pos] != t.tid:
                reader[pos] = -2  # read by several threads in this phase
        _log(t, self, pos, "r")
        return self._arr[idx]

    def __setitem__(self, key, value):
        idx, pos = self._locate(key, "wrote")
        if len(idx) < self.ndim:
            _fault(f"wrote a whole row {self._label(idx)}: assign one element at a time", "index")
        t = _current
        if self._readonly:
            _fault(
                f"wrote {self._label(idx)}: {self._name} is an input of the kernel and must not "
                f"change (write results to the output array only)",
                "input",
            )
        _log(t, self, pos, "w")
        if self._space == "global":
            t.stats.global_writes += 1
            if t.stats.global_writes > MAX_GLOBAL_ACCESSES_PER_THREAD:
                _endless(t)
            w = self._writer
            if w is not None:
                prev = w[pos]
                if prev == ATOMIC:
                    _fault(
                        f"wrote {self._label(idx)} with a plain store while other threads update it with "
                        f"cuda.atomic in this launch: the plain write races with them (updates get lost). "
                        f"Update it with cuda.atomic.add as well.",
                        "race",
                    )
                if prev != -1 and prev != t.gid:
                    other = t.launch.thread_name_gid(prev)
                    last = t.last_read
                    if last is not None and last[0] is w and last[1] == pos:
                        _fault(
                            f"read and then wrote {self._label(idx)} (a read-modify-write such as "
                            f"`{self._name}[i] += 1`), which {other} also updated in this launch: on a GPU "
                            f"both threads can read the same old value and one update is lost. This "
                            f"simulator runs threads one after another, so the count happens to come out "
                            f"right here; a GPU gives no such promise. Use cuda.atomic.add("
                            f"{self._name}, index, value), one indivisible read-modify-write.",
                            "lost-update",
                        )
                    _fault(
                        f"wrote {self._label(idx)}, which {other} also wrote in this launch: "
                        f"two threads must not write one element ({_duplicate_hint(t, w, prev, pos)})",
                        "duplicate",
                    )
                w[pos] = t.gid
        else:
            t.stats.shared_writes += 1
            init, w_epoch, writer, r_epoch, reader = self._state
            e = t.epoch
            if w_epoch[pos] == e and writer[pos] != t.tid:
                other = t.launch.thread_name(t, writer[pos])
                _fault(
                    f"wrote {self._label(idx)} in the same phase as {other} wrote it: a data race. " + _TWO_BARRIERS,
                    "race",
                )
            if r_epoch[pos] == e and reader[pos] != t.tid:
                who = "other threads" if reader[pos] == -2 else t.launch.thread_name(t, reader[pos])
                _fault(
                    f"wrote {self._label(idx)} in the same phase as {who} read it, with no "
                    f"cuda.syncthreads() between: a data race (on a GPU whether that read sees the "
                    f"value before or after this write is luck). " + _TWO_BARRIERS,
                    "race",
                )
            init[pos] = True
            w_epoch[pos] = e
            writer[pos] = t.tid
        self._arr[idx] = value


def _log(t, array: SimArray, pos: int, kind: str) -> None:
    """Who touched which element, for the picture of a fault: the current block's accesses (and
    the previous block's), at most LOG_CAP each, keyed by the array's bookkeeping (views share it)."""
    launch = t.launch
    log = launch.log
    if len(log) < LOG_CAP:
        key = id(array._writer if array._space == "global" else array._state)
        index = launch.log_arrays.get(key)
        if index is None:
            base = array._arr.base if array._prefix else array._arr
            size = base.size if isinstance(base, np.ndarray) and array._prefix else array._arr.size
            index = launch.log_arrays[key] = len(launch.log_names)
            launch.log_names.append([array._name, array._space, t.gid // launch.per_block, int(size)])
        log.append((index, t.gid, pos, kind))


def _duplicate_hint(t, writer: list, prev: int, pos: int) -> str:
    """Why two threads met at one element: their index misses the block (each thread writes once),
    or, in a loop, the step is smaller than the whole grid (the grid-stride loop's cuda.gridsize)."""
    launch = t.launch
    if launch.ndim == 1:
        total = math.prod(launch.griddim) * math.prod(launch.blockdim)
        for gid, extra in ((prev, ()), (t.gid, (pos,))):  # the steps of either thread's loop
            mine = sorted(set(i for i, g in enumerate(writer) if g == gid).union(extra))
            step = min((b - a for a, b in zip(mine, mine[1:])), default=0)
            if 0 < step < total:
                return (
                    f"the loop steps by {step} element{'s' if step > 1 else ''}, fewer than the {total} "
                    f"threads of the grid, so threads redo each other's elements: step by the whole grid, "
                    f"cuda.gridsize(1) = blocks x threads per block = {total}"
                )
    if prev // math.prod(launch.blockdim) == t.gid // math.prod(launch.blockdim):
        return (
            "both threads are in the same block: if the block has one value to write, let one thread "
            "write it (`if cuda.threadIdx.x == 0:`); otherwise each thread owns its own index"
        )
    return "each thread owns its own index; is the block index part of it?"


def _endless(t):
    _fault(
        f"made more than {MAX_GLOBAL_ACCESSES_PER_THREAD:,} global memory accesses: an endless loop? "
        f"(in a grid-stride loop the step must be the whole grid, cuda.gridsize(1), which is never 0)",
        "budget",
    )


def _shared_array(shape, dtype, name):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    dt = _as_dtype(dtype)
    arr = np.empty(shape, dt)
    if dt.kind == "f":
        arr.fill(np.nan)
    else:
        arr.fill(-12345 if dt.kind == "i" else 123)
    size = arr.size
    state = [[False] * size, [-1] * size, [-1] * size, [-1] * size, [-1] * size]
    return SimArray(arr, name, "shared", state=state)


def _as_dtype(dtype) -> np.dtype:
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype))  # a numba type such as numba.float32


# ---------------------------------------------------------------------------------------------
# the cuda module a simulated kernel sees


class _Shared:
    def array(self, shape, dtype):
        t = _current
        frame = sys._getframe(1)
        site = (frame.f_code, frame.f_lineno)
        n = t.shared_calls.get(site, 0)
        t.shared_calls[site] = n + 1
        key = site + (n,)
        block = t.launch.block_shared
        if key not in block:
            block[key] = _shared_array(shape, dtype, f"shared@line{frame.f_lineno}")
            block[key]._name = _guess_name(frame) or block[key]._name
            t.launch.shared.setdefault(key, (block[key]._name, tuple(block[key].shape), str(block[key].dtype)))
        arr = block[key]
        return arr


def _guess_name(frame) -> str | None:
    """The variable the shared array is assigned to, read from the source line (for messages)."""
    import linecache

    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    if "=" in line:
        lhs = line.split("=", 1)[0].strip()
        if lhs.isidentifier():
            return lhs
    return None


class _Local:
    def array(self, shape, dtype):
        return np.zeros(shape, _as_dtype(dtype))


class _Const:
    def array_like(self, ary):
        return ary


class _Atomic:
    """Atomics: the simulator runs one thread at a time, so a read-modify-write is atomic.
    An atomic update is not a race, so it bypasses the race and duplicate-write bookkeeping."""

    def _rmw(self, array, index, op):
        if isinstance(array, SimArray):
            idx, pos = array._locate(index, "atomically updated")
            t = _current
            stats = t.stats
            if array._space == "global":
                stats.global_reads += 1
                stats.global_writes += 1
                w = array._writer
                if w is not None:
                    prev = w[pos]
                    if prev >= 0 and prev != t.gid:
                        _fault(
                            f"atomically updated {array._label(idx)}, which {t.launch.thread_name_gid(prev)} "
                            f"wrote with a plain store in this launch: the plain write races with the atomic "
                            f"updates. Update it with cuda.atomic everywhere.",
                            "race",
                        )
                    if prev == -1:  # a plain writer stays recorded: another thread's atomic there is a race
                        w[pos] = ATOMIC
            else:
                stats.shared_reads += 1
                stats.shared_writes += 1
                array._state[0][pos] = True
            _log(t, array, pos, "a")
            if array._readonly:
                _fault(f"atomically updated {array._label(idx)}: {array._name} is an input of the kernel", "input")
            arr = array._arr
        else:
            idx, arr = index, array
        old = arr[idx]
        arr[idx] = op(old)
        return old

    def add(self, array, index, val):
        return self._rmw(array, index, lambda o: o + val)

    def sub(self, array, index, val):
        return self._rmw(array, index, lambda o: o - val)

    def max(self, array, index, val):
        return self._rmw(array, index, lambda o: max(o, val))

    def min(self, array, index, val):
        return self._rmw(array, index, lambda o: min(o, val))


class FakeCuda:
    """What the name ``cuda`` means inside a simulated kernel."""

    warpsize = WARP_SIZE

    def __init__(self, launch) -> None:
        self.gridDim = Dim3(*launch.griddim)
        self.blockDim = Dim3(*launch.blockdim)
        self.shared = _Shared()
        self.local = _Local()
        self.const = _Const()
        self.atomic = _Atomic()

    @property
    def threadIdx(self):
        return _current.threadIdx

    @property
    def blockIdx(self):
        return _current.blockIdx

    @property
    def laneid(self):
        return _current.tid % WARP_SIZE

    def grid(self, ndim):
        t, b, d = _current.threadIdx, _current.blockIdx, self.blockDim
        x = b.x * d.x + t.x
        if ndim == 1:
            return x
        y = b.y * d.y + t.y
        if ndim == 2:
            return x, y
        return x, y, b.z * d.z + t.z

    def gridsize(self, ndim):
        g, d = self.gridDim, self.blockDim
        if ndim == 1:
            return g.x * d.x
        if ndim == 2:
            return g.x * d.x, g.y * d.y
        return g.x * d.x, g.y * d.y, g.z * d.z

    def syncthreads(self):
        _current.launch.barrier(_current)

    def threadfence(self):
        pass

    threadfence_block = threadfence_system = threadfence

    def __getattr__(self, name):
        raise AttributeError(
            f"cuda.{name} is not supported inside kernels by the checking simulator "
            f"(the exercises need threadIdx, blockIdx, blockDim, gridDim, grid, gridsize, "
            f"shared.array, local.array and syncthreads)"
        )


class _NumbaProxy(types.ModuleType):
    """``numba`` as a simulated kernel sees it: ``numba.cuda`` is the fake, the rest is numba's."""

    def __init__(self, real, fake):
        super().__init__("numba")
        self._real, self.cuda = real, fake

    def __getattr__(self, name):
        return getattr(self._real, name)


def python_function(kernel) -> Callable:
    """The plain Python function behind a ``@cuda.jit`` kernel (simulator or GPU) or a function."""
    fn = getattr(kernel, "py_func", None)
    if fn is None:
        fn = getattr(kernel, "fn", None)
    if fn is None and isinstance(kernel, types.FunctionType):
        fn = kernel
    if not isinstance(fn, types.FunctionType):
        raise KernelFault(f"{kernel!r} is not a kernel: decorate the function with @cuda.jit", "config")
    return fn


def _is_cuda_module(v) -> bool:
    return isinstance(v, types.ModuleType) and v.__name__.endswith("cuda") and "numba" in v.__name__


def _rebind(fn: types.FunctionType, fake: FakeCuda, memo: dict) -> types.FunctionType:
    """A copy of ``fn`` whose globals see the fake ``cuda`` (device functions rebound too)."""
    if fn in memo:
        return memo[fn]
    g = dict(fn.__globals__)
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    memo[fn] = new
    for k, v in list(g.items()):
        if _is_cuda_module(v):
            g[k] = fake
        elif isinstance(v, types.ModuleType) and v.__name__ == "numba":
            g[k] = _NumbaProxy(v, fake)
        elif not isinstance(v, type) and (hasattr(v, "py_func") or type(v).__name__ == "FakeCUDAKernel"):
            try:
                g[k] = _rebind(python_function(v), fake, memo)
            except KernelFault:
                pass
    return new


def _uses_syncthreads(fn, seen=None) -> bool:
    seen = set() if seen is None else seen
    codes = [fn.__code__]
    found = False
    while codes:
        c = codes.pop()
        if c in seen:
            continue
        seen.add(c)
        if any(n.startswith("syncthreads") for n in c.co_names):
            found = True
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return found


# ---------------------------------------------------------------------------------------------
# workers: OS threads that run simulated threads one at a time, handing control back and forth


class _Worker:
    def __init__(self, pool):
        self.pool = pool
        self.wake = _thread.allocate_lock()  # held: the worker waits; released: it runs
        self.wake.acquire()
        self.job = None
        self.thread = threading.Thread(target=self._loop, daemon=True, name="cuda-sim-worker")
        self.thread.start()

    def _loop(self):
        while True:
            self.wake.acquire()
            _run_sim_thread(self.job)
            self.job = None
            self.pool.idle.append(self)
            self.pool.back.release()


class _Pool:
    def __init__(self):
        self.idle: list[_Worker] = []
        self.back = _thread.allocate_lock()  # released by a worker when control comes back
        self.back.acquire()

    def worker(self) -> _Worker:
        return self.idle.pop() if self.idle else _Worker(self)


_pool = _Pool()


# ---------------------------------------------------------------------------------------------
# the launch


@dataclasses.dataclass
class LaunchRecord:
    """What one checked launch did."""

    griddim: tuple[int, int, int]
    blockdim: tuple[int, int, int]
    threads: list[ThreadStats]
    writers: dict  # argument name -> array of writer gids (-1: never written, ATOMIC), global arrays
    shared: list = dataclasses.field(default_factory=list)  # (name, shape, dtype) of each shared array
    arrays: dict = dataclasses.field(default_factory=dict)  # argument name -> the array after the launch

    @property
    def n_threads(self) -> int:
        return len(self.threads)

    def total(self, field: str) -> int:
        return sum(getattr(t, field) for t in self.threads)

    def most(self, field: str) -> ThreadStats | None:
        return max(self.threads, key=lambda t: getattr(t, field), default=None)


class _Launch:
    def __init__(self, fn, griddim, blockdim, ndim):
        self.fn = fn
        self.griddim, self.blockdim, self.ndim = griddim, blockdim, ndim
        self.fault: KernelFault | None = None
        self.block_shared: dict = {}
        self.block_threads: list[_SimThread] = []
        self.args: tuple = ()
        self.suspendable = True
        self.pending_uninit: list = []
        self.shared: dict = {}  # allocation site -> (name, shape, dtype), first block's
        self.per_block = blockdim[0] * blockdim[1] * blockdim[2]
        self.log: list = []  # (array index, thread gid, flat position, "r" | "w" | "a"): this block's
        self.prev_log: list = []  # the previous block's
        self.log_arrays: dict = {}  # id of an array's bookkeeping -> index into log_names
        self.log_names: list = []  # [name, space, block of first access, size]
        self.bad_index = None  # (array name, index) of an out-of-bounds access

    def accesses(self) -> dict:
        """The access log as plain data (ch13lib/pictures.py draws it)."""
        return {
            "arrays": [list(a) for a in self.log_names],
            "events": [list(e) for e in self.prev_log + self.log],
            "blockdim": list(self.blockdim),
            "griddim": list(self.griddim),
            "bad_index": self.bad_index,
        }

    # names for messages
    def _coords(self, linear, dims):
        x = linear % dims[0]
        y = (linear // dims[0]) % dims[1]
        z = linear // (dims[0] * dims[1])
        return (x, y, z)

    def thread_name(self, t: _SimThread, tid: int) -> str:
        nd = self.ndim
        return f"thread {_fmt3(self._coords(tid, self.blockdim), nd)} of the same block"

    def thread_name_gid(self, gid: int) -> str:
        per_block = self.blockdim[0] * self.blockdim[1] * self.blockdim[2]
        b, t = divmod(gid, per_block)
        nd = self.ndim
        return f"thread {_fmt3(self._coords(t, self.blockdim), nd)} of block {_fmt3(self._coords(b, self.griddim), nd)}"

    def end_phase(self):
        """Reads of shared cells nobody had written, and nobody wrote later in the phase either."""
        pending, self.pending_uninit = self.pending_uninit, []
        if pending:
            fault = KernelFault(
                f"{pending[0]} before any thread of the block wrote it: shared memory starts as garbage "
                f"on a GPU (this simulator does not zero it). Write every cell you read, for example 0 "
                f"where the tile hangs over the edge of the matrix.",
                "uninit",
            )
            self.fault = self.fault or fault
            raise fault

    def run_body(self, st: _SimThread):
        global _current
        _current = st
        self.fn(*self.args)

    def barrier(self, st: _SimThread):
        global _current
        if not self.suspendable:
            raise _NeedThreads()
        st.state = "barrier"
        if _greenlet is not None:
            st.worker.parent.switch()
        else:
            _pool.back.release()
            st.worker.wake.acquire()
        _current = st
        if st.abort:
            raise _Abort()
        st.epoch += 1


def _resume(st: _SimThread):
    """Give control to st until it reaches a barrier, returns or raises."""
    global _current
    if _greenlet is not None:
        if st.worker is None:
            st.worker = _greenlet.greenlet(_run_sim_thread)
        st.state = "running"
        _current = st
        st.worker.switch(st)
        return
    if st.worker is None:
        st.worker = _pool.worker()
        st.worker.job = st
    st.state = "running"
    _current = st
    st.worker.wake.release()
    _pool.back.acquire()


def _run_sim_thread(st: _SimThread):
    """Run one simulated thread's body to its end, on a worker thread or a greenlet; how it ended
    goes into ``st.state`` (and ``st.exc``), which the launch reports."""
    try:
        st.launch.run_body(st)
        st.state = "done"
    except _Abort:
        st.state = "done"
    except BaseException as e:  # noqa: BLE001 - reported by the launch
        st.state, st.exc = "error", e


def _kernel_params(fn) -> list[str]:
    code = fn.__code__
    return list(code.co_varnames[: code.co_argcount])


def launch(
    kernel,
    griddim,
    blockdim,
    args: Sequence,
    *,
    readonly: Sequence[int] = (),
    limits: dict[int, int] | None = None,
    ndim: int | None = None,
) -> LaunchRecord:
    """Run ``kernel[griddim, blockdim](*args)`` on the checking simulator.

    ``readonly``: positions of the arguments the kernel must not write (its inputs).
    ``limits``: position -> logical length n of a 1-D argument (accesses at >= n are faults).
    numpy arrays (and numba simulator device arrays) are checked and written in place.
    Raises KernelFault with the first fault found; returns the LaunchRecord otherwise.
    """
    fn = python_function(kernel)
    g, b = normalize_dims(griddim, blockdim)
    if ndim is None:
        ndim = (
            1
            if (isinstance(blockdim, (int, np.integer)) or len(blockdim) == 1)
            and (isinstance(griddim, (int, np.integer)) or len(griddim) == 1)
            else 2
            if max(g[2], b[2]) == 1
            else 3
        )
    total = g[0] * g[1] * g[2] * b[0] * b[1] * b[2]
    if total > MAX_SIMULATED_THREADS:
        raise KernelFault(
            f"launch of {total} threads ({g} blocks of {b}): more than the {MAX_SIMULATED_THREADS} "
            f"this simulator runs; is the number of blocks right?",
            "config",
        )
    params = _kernel_params(fn)
    if len(params) != len(args) and not fn.__code__.co_flags & 0x04:
        raise KernelFault(
            f"{fn.__name__} takes {len(params)} arguments ({', '.join(params)}) but was launched with {len(args)}",
            "config",
        )
    with _launch_lock:
        return _launch(fn, g, b, ndim, list(args), params, set(readonly), limits or {})


def _launch(fn, g, b, ndim, args, params, readonly, limits) -> LaunchRecord:
    global _current
    writers = {}
    wrapped = []
    copy_back = []  # (device array, host copy): real GPU arrays are simulated on a host copy
    for pos, a in enumerate(args):
        name = params[pos] if pos < len(params) else f"arg{pos}"
        host = getattr(a, "_ary", None) if type(a).__name__ == "FakeCUDAArray" else None
        if host is not None:
            a = host
        elif hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
            host = _to_host(a)
            copy_back.append((a, host))
            a = host
        if isinstance(a, np.ndarray) and a.ndim > 0:
            w = [-1] * a.size
            writers[name] = (w, a.shape)
            wrapped.append(SimArray(a, name, "global", readonly=pos in readonly, limit=limits.get(pos), writer=w))
        else:
            wrapped.append(a)
    suspendable = _uses_syncthreads(fn)
    for attempt in range(2):
        launch = _Launch(None, g, b, ndim)
        launch.suspendable = suspendable
        fake = FakeCuda(launch)
        launch.fn = _rebind(fn, fake, {})
        launch.args = tuple(wrapped)
        for w, _ in writers.values():
            w[:] = [-1] * len(w)
        stats: list[ThreadStats] = []
        try:
            with np.errstate(all="ignore"):
                _run_grid(launch, g, b, stats)
            break
        except _NeedThreads:
            suspendable = True
        except KernelFault as e:
            e.accesses = launch.accesses()  # who touched what, up to the fault: for its picture
            e.accesses["fault_thread"] = getattr(e, "thread", None)
            raise
        finally:
            _current = None
    for dev, host in copy_back:
        _to_device(dev, host)
    return LaunchRecord(
        g,
        b,
        stats,
        {k: np.array(w, np.int64).reshape(shape) for k, (w, shape) in writers.items()},
        list(launch.shared.values()),
        {params[p] if p < len(params) else f"arg{p}": w._arr for p, w in enumerate(wrapped) if isinstance(w, SimArray)},
    )


def _to_host(dev) -> np.ndarray:
    """A host copy of a GPU array (numba DeviceNDArray or cupy), for simulating a kernel on it."""
    if hasattr(dev, "copy_to_host"):
        return dev.copy_to_host()
    import cupy

    return cupy.asnumpy(dev)


def _to_device(dev, host: np.ndarray) -> None:
    if hasattr(dev, "copy_to_device"):
        dev.copy_to_device(host)
    else:
        dev.set(host)


def _run_grid(launch: _Launch, g, b, stats):
    per_block = b[0] * b[1] * b[2]
    block_points = [(x, y, z) for z in range(g[2]) for y in range(g[1]) for x in range(g[0])]
    thread_points = [(x, y, z) for z in range(b[2]) for y in range(b[1]) for x in range(b[0])]
    for bl, bp in enumerate(block_points):
        launch.block_shared = {}
        launch.prev_log, launch.log = launch.log, []
        threads = [_SimThread(launch, bp, tp, tid, bl * per_block + tid) for tid, tp in enumerate(thread_points)]
        stats.extend(t.stats for t in threads)
        if not launch.suspendable:
            _run_inline(launch, threads)
        else:
            _run_block(launch, threads)


def _run_inline(launch, threads):
    global _current
    for t in threads:
        _current = t
        try:
            launch.fn(*launch.args)
        except (_NeedThreads, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001
            _raise_thread_error(launch, t, e)
        if launch.fault is not None:  # a fault the kernel swallowed with try/except
            raise launch.fault
    launch.end_phase()


def _raise_thread_error(launch, t, e):
    if launch.fault is not None:
        raise launch.fault
    if isinstance(e, (KernelFault, NotImplementedError)):
        raise e
    raise KernelFault(f"{t.where()} raised {type(e).__name__}: {e}", "exception").with_traceback(e.__traceback__)


def _run_block(launch, threads):
    phase = 0
    live = list(threads)
    try:
        while live:
            for t in live:
                _resume(t)
                if t.state == "error":
                    _raise_thread_error(launch, t, t.exc)
                if launch.fault is not None:
                    raise launch.fault
            launch.end_phase()
            waiting = [t for t in live if t.state == "barrier"]
            finished = [t for t in live if t.state == "done"]
            if waiting and finished:
                t_done, t_wait = finished[0], waiting[0]
                fault = KernelFault(
                    f"barrier divergence: {t_done.where()} finished the kernel while {t_wait.where()} "
                    f"waits at cuda.syncthreads() number {phase + 1}. Every thread of a block must reach "
                    f"every syncthreads (on a GPU this hangs or corrupts the tile): do not `return` early "
                    f"or put syncthreads under an `if` that differs between threads; guard the loads and the "
                    f"final write instead.",
                    "divergence",
                )
                launch.fault = fault
                raise fault
            live = waiting
            phase += 1
    finally:
        _abort(launch, [t for t in threads if t.state == "barrier"])


def _abort(launch, stuck):
    for t in stuck:
        for _ in range(1000):
            if t.state != "barrier":
                break
            t.abort = True
            _resume(t)


# ---------------------------------------------------------------------------------------------
# spying on a launcher: which configuration does it launch, and what does the kernel do?


class Spy:
    """Records a launcher's launches while it runs, in place of its kernel (a global of the
    launcher's module): each launch's configuration, then the launch on the checking simulator
    (``mode="check"``), not at all (``"record"``), or on the real kernel (``"pass"``: numba's
    simulator or a GPU). ``launches`` holds ``(griddim, blockdim, LaunchRecord or None)``.

    The launcher never holds the Spy: it holds :meth:`handle`, which launches and has nothing to
    read or set (no records, no mode, no fault), and each record is a copy made when its launch
    ended, so nothing the launcher does afterwards (to its own output array, say) changes what
    the harness reports. Its records stay reachable only by introspection of harness functions
    (``__closure__``), which the screen flags (docs/sandbox.md)."""

    def __init__(
        self,
        kernel,
        name: str,
        mode: str = "check",
        *,
        readonly: Sequence[int] = (),
        limits: dict[int, int] | None = None,
    ) -> None:
        self.kernel, self.name, self.mode = kernel, name, mode
        self.readonly, self.limits = tuple(readonly), limits
        self.launches: list = []
        self.raw_configs: list = []
        self.fault: KernelFault | None = None  # the first fault, even if the launcher swallowed it

    def handle(self):
        """What the launcher finds in place of its kernel: ``kernel[griddim, blockdim](*args)``,
        ``kernel(...)`` and ``kernel.forall(...)`` (both refused), its ``__name__`` and
        ``__qualname__`` (a launcher may print them), and no other attribute."""
        spy = self
        name = str(getattr(spy.kernel, "__name__", spy.name))

        class Kernel:
            __slots__ = ()
            __name__ = property(lambda self: name)

            def __getattr__(self, attr: str):
                if attr == "__qualname__":  # a class body cannot make it a property
                    return name
                raise AttributeError(f"{spy.name!r} (a kernel) has no attribute {attr!r}")

            def __getitem__(self, config):
                return spy._configure(config)

            def __call__(self, *args, **kwargs):
                spy._refuse(
                    f"{spy.name}(...) was called without a launch configuration: a kernel is "
                    f"launched as {spy.name}[blocks, threads_per_block](...)"
                )

            def forall(self, *args, **kwargs):
                spy._refuse(
                    f"{spy.name}.forall(...) picks its own block size: launch "
                    f"{spy.name}[blocks, threads_per_block](...) yourself"
                )

            def __repr__(self) -> str:
                return f"<kernel {spy.name}>"

        return Kernel()

    def _refuse(self, message: str):
        fault = KernelFault(message, "config")
        self.fault = self.fault or fault
        raise fault

    def _configure(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            self._refuse(
                f"launch {self.name} as {self.name}[blocks, threads_per_block](...), got {self.name}[{config!r}]"
            )
        return lambda *args: self._launch(config, args)

    def _launch(self, config, args):
        griddim, blockdim = config[0], config[1]
        self.raw_configs.append((griddim, blockdim))
        if self.mode == "record":
            try:
                g, b = normalize_dims(griddim, blockdim)
            except KernelFault:
                g, b = None, None
            self.launches.append((g, b, None))
            return None
        try:
            g, b = normalize_dims(griddim, blockdim)
            if self.mode == "pass":
                self.launches.append((g, b, None))
                return self.kernel[config](*args)
            record = launch(self.kernel, griddim, blockdim, args, readonly=self.readonly, limits=self.limits)
        except KernelFault as e:
            self.fault = self.fault or e
            raise
        self.launches.append((g, b, _snapshot(record)))
        return None


def _snapshot(record: LaunchRecord) -> LaunchRecord:
    """A copy of ``record`` that shares nothing with the launcher's arrays or the live stats."""
    return dataclasses.replace(
        record,
        threads=[dataclasses.replace(t) for t in record.threads],
        writers={k: np.array(v, copy=True) for k, v in record.writers.items()},
        shared=list(record.shared),
        arrays={k: np.array(v, copy=True) for k, v in record.arrays.items()},
    )


class spying:
    """``with spying(launch_fn, "vec_add", spy):`` — the launcher's global kernel is the spy."""

    def __init__(self, launcher: Callable, name: str, spy: Spy) -> None:
        self.globals = getattr(launcher, "__globals__", None)
        if self.globals is None:
            raise KernelFault(f"{launcher!r} is not a plain Python function", "config")
        self.name, self.spy = name, spy

    def __enter__(self) -> Spy:
        self.had = self.name in self.globals
        self.old = self.globals.get(self.name)
        if self.spy.kernel is None:
            self.spy.kernel = self.old
        self.globals[self.name] = self.spy.handle()
        return self.spy

    def __exit__(self, *exc) -> None:
        if self.had:
            self.globals[self.name] = self.old
        else:
            self.globals.pop(self.name, None)
