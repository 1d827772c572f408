"""Running a launch (a part of :mod:`ch13lib.cuda_sim`): the launch configuration, the simulated
threads and the order they run in, the kernel rebound to the device's ``cuda``, the greenlets (or
OS worker threads) that hold a thread at ``syncthreads``, and the record of what the launch did.
It sets ``_cuda_sim_device._current``, the running thread that every checked access reads.
"""

from __future__ import annotations

import _thread
import dataclasses
import functools
import importlib
import threading
import types
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ch13lib import _cuda_sim_device as _device
from ch13lib._cuda_sim_device import Dim3, FakeCuda, KernelFault, SimArray
from ch13lib._cuda_source import kernel_source
from ch13lib.cell import cell_source
from ch13lib.lang import Both, Messages

try:  # simulated threads as greenlets: no OS threads, so no per-user thread limit, and faster
    import greenlet as _greenlet
except ImportError:  # pragma: no cover - then OS threads, handing control over with locks
    _greenlet = None

MAX_THREADS_PER_BLOCK = 1024
MAX_SIMULATED_THREADS = 200_000  # beyond this a launch is refused: the simulator is for small grids

# What a launch says of its configuration and of its threads, in the course's language
# (ch13lib/lang.py); the accesses' own faults are _cuda_sim_device's.
M = Messages(
    griddim=("griddim (线程块数)", "griddim (blocks)"),
    blockdim=("blockdim (每块线程数)", "blockdim (threads per block)"),
    dims_count=("{name} 必须是 1 到 3 个整数, 得到的是 {dim}", "{name} must be 1 to 3 integers, got {dim}"),
    dims_type=(
        "{name} 必须是整数, 得到的是 {dim} (一个 {type}): 请用 // 或 math.ceil, 不要用 /",
        "{name} must be integers, got {dim} (a {type}): use // or math.ceil, not /",
    ),
    dims_zero=(
        "{name} {dim} 有一维小于 1: GPU 会拒绝这样的启动 (CUDA_ERROR_INVALID_VALUE)。没有工作要做时 (n == 0), "
        "不要启动核函数。",
        "{name} {dim} has a dimension below 1: a GPU refuses such a launch (CUDA_ERROR_INVALID_VALUE). With "
        "nothing to do (n == 0), do not launch.",
    ),
    block_size=(
        "blockdim {dim} 有 {n} 个线程: 一个线程块最多容纳 {most} 个",
        "blockdim {dim} has {n} threads: a block holds at most {most}",
    ),
    where=(
        "线程块 {block} 的线程 {thread} (threadIdx{x}={thread}, blockIdx{x}={block})",
        "thread {thread} of block {block} (threadIdx{x}={thread}, blockIdx{x}={block})",
    ),
    same_block=("同一线程块的线程 {thread}", "thread {thread} of the same block"),
    thread_of_block=("线程块 {block} 的线程 {thread}", "thread {thread} of block {block}"),
    not_a_kernel=(
        "{kernel} 不是核函数: 请用 @cuda.jit 修饰这个函数",
        "{kernel} is not a kernel: decorate the function with @cuda.jit",
    ),
    rebound=(
        "{kernel} 运行时读到的 `{name}` 已不是单元格文本里写的那个 (单元格运行时又绑定、删除或替换了它): numba 会"
        "编译另一个核函数。核函数用到的常量、库名和设备函数在单元格顶层各绑定一次",
        "when the cell runs, the `{name}` that {kernel} reads is no longer what the cell's text says (the cell "
        "binds it again, deletes or replaces it while it runs): numba would compile another kernel. Bind the "
        "constants, library names and device functions a kernel reads once each, at the top of the cell",
    ),
    not_in_cell=(
        "`{name}` 不是在单元格顶层用 @cuda.jit 定义的核函数: 评分时按 numba 从单元格文本编译的方式运行单元格中的核函数",
        "`{name}` is not a kernel defined with @cuda.jit at the top of the cell: the grading runs the cell's "
        "kernels as numba compiles them from the cell's text",
    ),
    uninit=(
        "{where}: 读取 {label} 时, 线程块中还没有任何线程写过它: GPU 上的共享内存一开始是垃圾值 (本模拟器不会把它"
        "清零)。读取的每个单元都要先写入, 例如分块超出矩阵边缘的部分写 0。",
        "{where}: read {label} before any thread of the block wrote it: shared memory starts as garbage on a GPU "
        "(this simulator does not zero it). Write every cell you read, for example 0 where the tile hangs over "
        "the edge of the matrix.",
    ),
    dynamic_shared=(
        "启动的第四个参数是动态共享内存的字节数, 得到的是 {value}",
        "the launch's fourth parameter is the bytes of dynamic shared memory, got {value}",
    ),
    too_many=(
        "启动 {total} 个线程 ({grid} 个线程块, 每块 {block}): 超过了本模拟器能运行的 {most} 个; 线程块数算对了吗?",
        "launch of {total} threads ({grid} blocks of {block}): more than the {most} this simulator runs; is the "
        "number of blocks right?",
    ),
    arguments=(
        "{kernel} 有 {n} 个参数 ({params}), 但启动时传了 {given} 个",
        "{kernel} takes {n} arguments ({params}) but was launched with {given}",
    ),
    star_arguments=(
        "{kernel} 有 {n} 个参数 ({params}), 但启动时传了 {given} 个 (核函数的参数要逐个命名: numba 不编译 *args)",
        "{kernel} takes {n} arguments ({params}) but was launched with {given} (a kernel's parameters are named "
        "one by one: numba compiles no *args)",
    ),
    argument_type=(
        "核函数的参数 `{name}` 是一个 {type}: 核函数接受数组和数",
        "the kernel's argument `{name}` is a {type}: a kernel takes arrays and numbers",
    ),
    unreadable=(
        "{where} 读取了 `{name}`, 核函数不能读取它: {why}。核函数能读取的是它的参数, cuda、math 和 numpy 的函数"
        "与类型, 单元格中的设备函数 (@cuda.jit(device=True)), 以及单元格用字面量赋值的常量",
        "{where} reads `{name}`, which a kernel cannot read: {why}. A kernel reads its arguments, cuda's, math's "
        "and numpy's functions and types, the cell's device functions (@cuda.jit(device=True)) and constants the "
        "cell assigns from literals",
    ),
    raised=("{where} 抛出了 {type}: {error}", "{where} raised {type}: {error}"),
    divergence=(
        "屏障分歧: {done} 已执行完核函数, 而{waiting} 还在第 {number} 个 cuda.syncthreads() 处等待。线程块中"
        "的每个线程都必须到达每一个 syncthreads (在 GPU 上这会挂起或破坏分块数据): 不要提前 `return`, 也不要把 "
        "syncthreads 放在各线程结果不同的 `if` 之下; 应当改为保护加载和最后的写入。",
        "barrier divergence: {done} finished the kernel while {waiting} waits at cuda.syncthreads() number "
        "{number}. Every thread of a block must reach every syncthreads (on a GPU this hangs or corrupts the "
        "tile): do not `return` early or put syncthreads under an `if` that differs between threads; guard the "
        "loads and the final write instead.",
    ),
)


class _Abort(BaseException):
    """Unwinds a simulated thread after another thread of the launch has faulted."""


class _NeedThreads(BaseException):
    """An inline run met syncthreads: rerun the launch with suspendable threads."""


# ---------------------------------------------------------------------------------------------
# the launch configuration


def normalize_dims(griddim, blockdim) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Check a launch configuration as a GPU would; raise KernelFault with the reason."""

    def norm(dim, key):
        name = M.both(key)
        dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
        if not 1 <= len(dims) <= 3:
            raise KernelFault(M("dims_count", name=name, dim=repr(dim)), "config")
        for v in dims:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise KernelFault(M("dims_type", name=name, dim=repr(dim), type=type(v).__name__), "config")
            if v < 1:
                raise KernelFault(M("dims_zero", name=name, dim=repr(dim)), "config")
        dims = [int(v) for v in dims] + [1] * (3 - len(dims))
        return tuple(dims)

    g, b = norm(griddim, "griddim"), norm(blockdim, "blockdim")
    if b[0] * b[1] * b[2] > MAX_THREADS_PER_BLOCK:
        raise KernelFault(
            M("block_size", dim=repr(blockdim), n=b[0] * b[1] * b[2], most=MAX_THREADS_PER_BLOCK), "config"
        )
    return g, b


def _fmt3(d: Sequence[int], ndim: int) -> str:
    d = tuple(d)[: max(ndim, 1)]
    return str(d[0]) if len(d) == 1 else "(" + ", ".join(map(str, d)) + ")"


# ---------------------------------------------------------------------------------------------
# simulated threads


@dataclasses.dataclass
class ThreadStats:
    block: tuple[int, int, int]
    thread: tuple[int, int, int]
    global_reads: int = 0  # atomics included (an atomic reads and writes)
    global_writes: int = 0
    global_atomics: int = 0
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

    def where(self) -> Both:
        nd = self.launch.ndim
        return M.both(
            "where",
            thread=_fmt3(tuple(self.threadIdx), nd),
            block=_fmt3(tuple(self.blockIdx), nd),
            x=".x" if nd == 1 else "",
        )


_launch_lock = threading.Lock()  # one launch at a time (the device's current-thread pointer is global)


# ---------------------------------------------------------------------------------------------
# the kernel the simulator runs: the cell's, as numba compiles it


def python_function(kernel) -> Callable:
    """The plain Python function behind a ``@cuda.jit`` kernel (simulator or GPU) or a function."""
    fn = getattr(kernel, "py_func", None)
    if fn is None:
        fn = getattr(kernel, "fn", None)
    if fn is None and isinstance(kernel, types.FunctionType):
        fn = kernel
    if not isinstance(fn, types.FunctionType):
        raise KernelFault(M("not_a_kernel", kernel=repr(kernel)), "config")
    return fn


def _is_cuda_module(v) -> bool:
    return isinstance(v, types.ModuleType) and v.__name__.endswith("cuda") and "numba" in v.__name__


@functools.cache
def _numba_types() -> Mapping:
    """numba's scalar types by name, read-only: every launch's ``numba`` is made from it."""
    import numba
    from numba.core import types as numba_types

    return types.MappingProxyType({k: v for k, v in vars(numba).items() if isinstance(v, numba_types.Type)})


def _numba_for(fake: FakeCuda) -> types.ModuleType:
    """``numba`` as a kernel sees it: its types, and the simulator's ``cuda``."""
    m = types.ModuleType("numba")
    vars(m).update(_numba_types(), cuda=fake, types=importlib.import_module("numba.types"))
    return m


def _kernel(fn: types.FunctionType, fake: FakeCuda, source: tuple[str, str] | None):
    """(the function to run, what the kernel may read). Grading passes the cell's text: the kernel
    is then the cell's top-level ``@cuda.jit`` def of that name, made from the text with the globals
    numba compiles it with (ch13lib._cuda_source), whatever the cell's objects became while it ran.
    A notebook's self-check finds the text of the cell that defined the kernel; a kernel with no
    such text (made in a function, in a test) runs with its own globals, ``cuda`` the simulator's."""
    text = filename = None
    if source is not None:
        text, filename = source
    else:
        try:
            text, filename = cell_source(fn), fn.__code__.co_filename
        except ValueError:
            text = None
    if text is not None:
        src = kernel_source(text, filename)
        if fn.__name__ in src.kernels.values():
            changed = src.disagreement(fn)
            if changed is not None:  # numba would compile another kernel than the one the text says
                raise KernelFault(M("rebound", kernel=fn.__name__, name=changed), "config")
            return src.namespace(fake, _numba_for(fake))[fn.__name__], src
        if source is not None:
            raise KernelFault(M("not_in_cell", name=fn.__name__), "config")
    return _with_fake(fn, fake, {}), None


def _with_fake(fn: types.FunctionType, fake: FakeCuda, memo: dict) -> types.FunctionType:
    """A copy of ``fn`` whose globals see the simulator's ``cuda`` (its device functions too)."""
    if fn in memo:
        return memo[fn]
    g = dict(fn.__globals__)
    memo[fn] = new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    for k, v in list(g.items()):
        if _is_cuda_module(v):
            g[k] = fake
        elif k == "numba" and isinstance(v, types.ModuleType):
            g[k] = _numba_for(fake)
        elif not isinstance(v, type) and isinstance(getattr(v, "py_func", None), types.FunctionType):
            g[k] = _with_fake(v.py_func, fake, memo)
    return new


def _codes(code: types.CodeType):
    """``code`` and every code nested in it (lambdas, comprehensions, inner functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _uses_syncthreads(fn) -> bool:
    return any(n.startswith("syncthreads") for c in _codes(fn.__code__) for n in c.co_names)


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
        self.dynamic_shared = 0  # bytes: what cuda.shared.array(0, dtype) holds
        self.source = None  # the cell's KernelSource, when the kernel was made from it

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

    def thread_name(self, t: _SimThread, tid: int) -> Both:
        nd = self.ndim
        return M.both("same_block", thread=_fmt3(self._coords(tid, self.blockdim), nd))

    def thread_name_gid(self, gid: int) -> Both:
        per_block = self.blockdim[0] * self.blockdim[1] * self.blockdim[2]
        b, t = divmod(gid, per_block)
        nd = self.ndim
        return M.both(
            "thread_of_block",
            thread=_fmt3(self._coords(t, self.blockdim), nd),
            block=_fmt3(self._coords(b, self.griddim), nd),
        )

    def end_phase(self):
        """Reads of shared cells nobody had written, and nobody wrote later in the phase either."""
        pending, self.pending_uninit = self.pending_uninit, []
        if pending:
            t, label = pending[0]
            fault = KernelFault(M("uninit", where=t.where(), label=label), "uninit")
            self.fault = self.fault or fault
            raise fault

    def run_body(self, st: _SimThread):
        _device._current = st
        self.fn(*self.args)

    def barrier(self, st: _SimThread):
        if not self.suspendable:
            raise _NeedThreads()
        st.state = "barrier"
        if _greenlet is not None:
            st.worker.parent.switch()
        else:
            _pool.back.release()
            st.worker.wake.acquire()
        _device._current = st
        if st.abort:
            raise _Abort()
        st.epoch += 1


def _resume(st: _SimThread):
    """Give control to st until it reaches a barrier, returns or raises."""
    if _greenlet is not None:
        if st.worker is None:
            st.worker = _greenlet.greenlet(_run_sim_thread)
        st.state = "running"
        _device._current = st
        st.worker.switch(st)
        return
    if st.worker is None:
        st.worker = _pool.worker()
        st.worker.job = st
    st.state = "running"
    _device._current = st
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
    dynamic_shared: int = 0,
    source: tuple[str, str] | None = None,
    ran: list | None = None,
) -> LaunchRecord:
    """Run ``kernel[griddim, blockdim](*args)`` on the checking simulator.

    ``readonly``: positions of the arguments the kernel must not write (its inputs).
    ``limits``: position -> logical length n of a 1-D argument (accesses at >= n are faults).
    ``dynamic_shared``: bytes of dynamic shared memory (the launch's fourth parameter), what
    ``cuda.shared.array(0, dtype)`` holds.
    ``source``: the cell's (text, file name) when grading: the kernel run is the cell's, as numba
    compiles it (:func:`_kernel`). ``ran``: gets (kernel, argument types) of this launch, what
    the judge has numba compile.
    numpy arrays (and numba simulator device arrays) are checked and written in place.
    Raises KernelFault with the first fault found; returns the LaunchRecord otherwise.
    """
    fn = python_function(kernel)
    g, b = normalize_dims(griddim, blockdim)
    if isinstance(dynamic_shared, bool) or not isinstance(dynamic_shared, (int, np.integer)) or dynamic_shared < 0:
        raise KernelFault(M("dynamic_shared", value=repr(dynamic_shared)), "config")
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
        raise KernelFault(M("too_many", total=total, grid=g, block=b, most=MAX_SIMULATED_THREADS), "config")
    params = _kernel_params(fn)
    if len(params) != len(args) or fn.__code__.co_flags & (0x04 | 0x08):
        raise KernelFault(
            M(
                "star_arguments" if fn.__code__.co_flags & 0x0C else "arguments",
                kernel=fn.__name__,
                n=len(params),
                params=", ".join(params),
                given=len(args),
            ),
            "config",
        )
    with _launch_lock:
        return _launch(
            fn, g, b, ndim, list(args), params, set(readonly), limits or {}, int(dynamic_shared), source, ran
        )


def arg_types(kernel, args: Sequence) -> list:
    """[kernel's name, each argument's type] of a launch, as :func:`launch` reports what it ran:
    what a launch that is only recorded would have had numba compile."""
    fn = python_function(kernel)
    params = _kernel_params(fn)
    out = []
    for pos, a in enumerate(args):
        host = getattr(a, "_ary", None) if type(a).__name__ == "FakeCUDAArray" else None
        if host is not None:
            a = host
        elif hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
            face = a.__cuda_array_interface__
            a = np.empty(tuple(face.get("shape", ())), np.dtype(face.get("typestr", "f8")))
        out.append(_arg_type(a, params[pos] if pos < len(params) else f"argument {pos}"))
    return [fn.__name__, out]


def _arg_type(a, name: str) -> dict:
    """An argument's type as numba types it at a launch: an array's dtype, dimensions and layout,
    or a number's dtype."""
    if isinstance(a, np.ndarray):
        layout = "C" if a.flags.c_contiguous else "F" if a.flags.f_contiguous else "A"
        return {"dtype": a.dtype.name, "ndim": a.ndim, "layout": layout}
    if isinstance(a, np.generic):
        return {"dtype": a.dtype.name, "ndim": 0}
    for t, dtype in ((bool, "bool"), (int, "int64"), (float, "float64"), (complex, "complex128")):
        if isinstance(a, t):
            return {"dtype": dtype, "ndim": 0}
    raise KernelFault(M("argument_type", name=name, type=type(a).__name__), "config")


def _launch(fn, g, b, ndim, args, params, readonly, limits, dynamic_shared, source, ran) -> LaunchRecord:
    writers = {}
    wrapped = []
    copy_back = []  # (device array, host copy): real GPU arrays are simulated on a host copy
    arg_types = []
    for pos, a in enumerate(args):
        name = params[pos]
        host = getattr(a, "_ary", None) if type(a).__name__ == "FakeCUDAArray" else None
        if host is not None:
            a = host
        elif hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
            host = _to_host(a)
            copy_back.append((a, host))
            a = host
        arg_types.append(_arg_type(a, name))
        if isinstance(a, np.ndarray) and a.ndim > 0:
            w = [-1] * a.size
            writers[name] = (w, a.shape)
            wrapped.append(SimArray(a, name, "global", readonly=pos in readonly, limit=limits.get(pos), writer=w))
        else:
            wrapped.append(a)
    if ran is not None:
        ran.append([fn.__name__, arg_types])
    suspendable = _uses_syncthreads(fn)
    for attempt in range(2):
        launch = _Launch(None, g, b, ndim)
        launch.suspendable = suspendable
        launch.dynamic_shared = dynamic_shared
        fake = FakeCuda(launch)
        launch.args = tuple(wrapped)
        for w, _ in writers.values():
            w[:] = [-1] * len(w)
        stats: list[ThreadStats] = []
        try:
            launch.fn, launch.source = _kernel(fn, fake, source)
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
            _device._current = None
    for dev, host in copy_back:
        _to_device(dev, host)
    return LaunchRecord(
        g,
        b,
        stats,
        {k: np.array(w, np.int64).reshape(shape) for k, (w, shape) in writers.items()},
        list(launch.shared.values()),
        {params[p]: w._arr for p, w in enumerate(wrapped) if isinstance(w, SimArray)},
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
    for t in threads:
        _device._current = t
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
    if type(e) is NameError and launch.source is not None and e.name:
        why = launch.source.why_unreadable(e.name)
        raise KernelFault(M("unreadable", where=t.where(), name=e.name, why=why), "global")
    raise KernelFault(M("raised", where=t.where(), type=type(e).__name__, error=str(e)), "exception").with_traceback(
        e.__traceback__
    )


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
                    M("divergence", done=t_done.where(), waiting=t_wait.where(), number=phase + 1), "divergence"
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
