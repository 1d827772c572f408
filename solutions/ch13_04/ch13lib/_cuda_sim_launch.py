"""Running a launch (a part of :mod:`ch13lib.cuda_sim`): the launch configuration, the simulated
threads and the order they run in, the kernel rebound to the device's ``cuda``, the greenlets (or
OS worker threads) that hold a thread at ``syncthreads``, and the record of what the launch did.
It sets ``_cuda_sim_device._current``, the running thread that every checked access reads.
"""

from __future__ import annotations

import _thread
import builtins
import cmath
import dataclasses
import dis
import functools
import math
import os
import sys
import threading
import types
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from ch13lib import _cuda_sim_device as _device
from ch13lib._cuda_sim_device import Dim3, FakeCuda, KernelFault, SimArray
from ch13lib.cell import closure_value, code_global_names

try:  # simulated threads as greenlets: no OS threads, so no per-user thread limit, and faster
    import greenlet as _greenlet
except ImportError:  # pragma: no cover - then OS threads, handing control over with locks
    _greenlet = None

MAX_THREADS_PER_BLOCK = 1024
MAX_SIMULATED_THREADS = 200_000  # beyond this a launch is refused: the simulator is for small grids


class _Abort(BaseException):
    """Unwinds a simulated thread after another thread of the launch has faulted."""


class _NeedThreads(BaseException):
    """An inline run met syncthreads: rerun the launch with suspendable threads."""


# ---------------------------------------------------------------------------------------------
# the launch configuration


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

    def where(self) -> str:
        nd = self.launch.ndim
        return (
            f"thread {_fmt3(tuple(self.threadIdx), nd)} of block {_fmt3(tuple(self.blockIdx), nd)}"
            f" (threadIdx{'.x' if nd == 1 else ''}={_fmt3(tuple(self.threadIdx), nd)},"
            f" blockIdx{'.x' if nd == 1 else ''}={_fmt3(tuple(self.blockIdx), nd)})"
        )


_launch_lock = threading.Lock()  # one launch at a time (the device's current-thread pointer is global)


# ---------------------------------------------------------------------------------------------
# the kernel, rebound to the device's cuda


class _LibraryView(types.ModuleType):
    """A library module as a simulated kernel sees it: what numba compiles of it, nothing else.
    ``numba.cuda`` is the fake; a submodule of numba, numpy or math is seen the same way; a number,
    a type, a builtin or ufunc of the library, a device function pass through. Anything else (a
    module outside them, ``builtins``, a Python function, an object) is refused when read: through
    ``numba.cloudpickle.builtins.getattr`` and a name built at run time a kernel held the raw array
    behind an argument, no access counted (red team, stop 37: tiled_matmul 7 -> 10, histogram 0 -> 8)."""

    def __init__(self, real, fake, kernel: str):
        super().__init__(real.__name__)
        for k, v in (("_real", real), ("_fake", fake), ("_kernel", kernel)):
            object.__setattr__(self, k, v)

    def __setattr__(self, name, value):
        # a kernel cannot store on a library module: ``np.tally = st`` on the (one, cached) view
        # carried a board between simulated threads (red team, stop 38: histogram 0 -> 8)
        raise KernelFault(
            f"{self._kernel} sets `{self.__name__}.{name}`: a kernel cannot store on a module (numba compiles "
            "no such thing; keep values in local variables, shared or global arrays)",
            "global",
        )

    def __delattr__(self, name):
        self.__setattr__(name, None)

    def __getattr__(self, name):
        value = _kernel_view(getattr(self._real, name), self._fake, self._kernel, f"{self.__name__}.{name}")
        object.__setattr__(self, name, value)  # kept once accepted: a kernel reads np.float32 in every thread's loop
        return value


def _kernel_view(value, fake, kernel: str, label: str):
    """``value`` as the kernel ``kernel`` may hold it (a global, a closure's, a default, a library
    module's attribute): the fake for numba.cuda, a _LibraryView for a library module."""
    if _is_cuda_module(value):
        return fake
    if type(value) is tuple:
        return tuple(_kernel_view(x, fake, kernel, label) for x in value)
    if type(value) is types.ModuleType:
        if value is not builtins and _library_module(value):
            return _LibraryView(value, fake, kernel)
    elif _constant(value) or (type(value) is np.ufunc and _genuine(type(value))):
        return value
    raise KernelFault(
        f"{kernel} reads `{label}`, {_kind(value)}: numba compiles no such thing in a kernel (a kernel "
        "uses cuda's, math's and numpy's functions, numbers and types, and device functions)",
        "global",
    )


def _kind(value) -> str:
    if isinstance(value, types.ModuleType):
        return f"the module {getattr(value, '__name__', '?')}"
    return f"a {type(value).__name__}"


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
    _check_captured(fn, g)
    # modules (and tuples holding them) in its closure and defaults are seen through views too
    closure = tuple(
        types.CellType(_kernel_view(closure_value(c), fake, fn.__name__, name))
        if _holds_module(closure_value(c))
        else c
        for name, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())
    )
    defaults = fn.__defaults__ and tuple(
        _kernel_view(d, fake, fn.__name__, "a default") if _holds_module(d) else d for d in fn.__defaults__
    )
    new = types.FunctionType(fn.__code__, g, fn.__name__, defaults, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__ and {
        k: _kernel_view(d, fake, fn.__name__, "a default") if _holds_module(d) else d
        for k, d in fn.__kwdefaults__.items()
    }
    memo[fn] = new
    used = code_global_names(fn.__code__)  # what it names: another kernel of the cell is not checked here
    for k, v in [(k, v) for k, v in g.items() if k in used]:
        if _holds_module(v):
            g[k] = _kernel_view(v, fake, fn.__name__, k)
        elif not isinstance(v, type) and (hasattr(v, "py_func") or type(v).__name__ == "FakeCUDAKernel"):
            try:
                device_fn = python_function(v)
            except KernelFault:
                continue
            g[k] = _rebind(device_fn, fake, memo)
    return new


_PLAIN_CONSTANTS = (int, float, complex, str, bool, type(None))


def _holds_module(v) -> bool:
    """A module, or a tuple with one at any depth (what _constant lets a kernel capture)."""
    return type(v) is types.ModuleType or (type(v) is tuple and any(_holds_module(x) for x in v))


def _genuine(cls) -> bool:
    """A class found under its own name in the module it names (no impostor claiming numba's)."""
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    obj = module
    for part in (getattr(cls, "__qualname__", "") or "?").split("."):
        obj = getattr(obj, part, None)
    return obj is cls


_TOP_MODULES = {"math": math, "cmath": cmath, "numpy": np, "builtins": builtins}  # as this module found them
_SITE = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))  # numba sits beside numpy


def _library_module(v) -> bool:
    """math, cmath, numpy, numba and their submodules, the very objects (a submodule as its genuine
    parent's attribute; the grading subject reports any attribute a cell adds to these libraries);
    a module the cell makes or registers is none of these."""
    name = getattr(v, "__name__", None)
    if type(v) is not types.ModuleType or type(name) is not str:
        return False
    top, _, rest = name.partition(".")
    root = _TOP_MODULES.get(top)
    if root is None and top == "numba":
        numba = sys.modules.get("numba")
        spec = getattr(numba, "__spec__", None)
        if numba is not None and os.path.dirname(os.path.dirname(str(getattr(spec, "origin", "")))) == _SITE:
            root = numba
    obj = root
    for part in rest.split(".") if rest else ():
        obj = getattr(obj, part, None)
    return obj is not None and obj is v


# The builtins a kernel may call or name: those numba's CUDA target compiles (and a few harmless
# ones), and the exception classes (``raise`` compiles). getattr, vars, type, object... read what a
# kernel's arguments hold besides their elements.
_KERNEL_BUILTINS = frozenset(
    "abs bool complex divmod enumerate float int isinstance iter len max min next pow print range "
    "round slice tuple zip".split()
) | {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"})
# numba compiles no attribute store in a CUDA kernel. The simulator's arrays had public slots
# (``bins.dtype = [0] * n``): one object per argument for the whole launch, so a Python list there
# was a board every thread counted into unseen (red team, stop 39: histogram 0 -> 8, tiled_matmul
# 1 -> 10 with a cache of A and B across blocks).
_ATTRIBUTE_STORES = frozenset({"STORE_ATTR", "DELETE_ATTR"})
# str.format's fields read attributes and items in C: "{0._arr[3]}".format(A), with the name built
# at run time, read the raw array behind A (red team, stop 37). numba formats no string in a kernel.
_FORMATTING = frozenset({"format", "format_map", "vformat"})


def _codes(code: types.CodeType):
    """``code`` and every code nested in it (lambdas, comprehensions, inner functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


@functools.lru_cache(maxsize=1024)
def _code_facts(code: types.CodeType) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(the first private, special or formatting attribute ``code`` or its nested code names, or None;
    the first attribute it stores or deletes, or None; the global names it loads), read once per code
    object: a kernel is launched many times."""
    private, stored, loaded = None, None, []
    for c in _codes(code):
        for ins in dis.get_instructions(c):
            name = ins.argval
            if ins.opname in _ATTRIBUTE_OPS and type(name) is str:
                if private is None and (name.startswith("_") or name in _FORMATTING):
                    private = name
                if stored is None and ins.opname in _ATTRIBUTE_STORES:
                    stored = name
            elif ins.opname == "LOAD_GLOBAL" and type(name) is str:
                loaded.append(name)
    return private, stored, tuple(dict.fromkeys(loaded))


def _check_code(fn: types.FunctionType, g: dict) -> None:
    """numba compiles attribute accesses only on what it types (an array's shape, size, ndim and
    dtype, cuda's, math's, numpy's): never a private or a special one, and no builtin that reaches
    into an object. A kernel that read ``A._arr``, or ``A.__getstate__()``, held the simulator's raw
    array and its records, where no access was counted, checked or attributed to a thread: naive
    kernels at full marks, a forged writer map (red team, stop 36)."""
    private, stored, loaded = _code_facts(fn.__code__)
    if stored is not None:
        raise KernelFault(
            f"{fn.__name__} sets `.{stored}`: numba compiles no attribute store in a kernel (an array, "
            "cuda and the thread's indices are read-only to it). Keep values in local variables, "
            "shared or global arrays",
            "global",
        )
    if private in _FORMATTING:
        raise KernelFault(
            f"{fn.__name__} uses `.{private}`: numba formats no string in a kernel (and a format field "
            "reads any attribute of its argument). A kernel reads and writes its arrays only by index",
            "global",
        )
    if private is not None:
        raise KernelFault(
            f"{fn.__name__} uses `.{private}`: numba compiles no private or special attribute in a "
            "kernel. A kernel reads and writes its arrays only by index (and reads their shape, "
            "size, ndim, dtype)",
            "global",
        )
    for name in loaded:  # a global of the cell's own name is judged by its value (_constant)
        if name not in g and name in builtins.__dict__ and name not in _KERNEL_BUILTINS:
            raise KernelFault(
                f"{fn.__name__} calls `{name}`, a Python builtin numba does not compile in a kernel "
                f"(it compiles {', '.join(sorted(n for n in _KERNEL_BUILTINS if n[0].islower()))})",
                "global",
            )


def _constant(v) -> bool:
    """What numba lets a kernel read from a global, a closure or a default: modules, numbers, strings,
    types, builtin functions, device functions and tuples of these. A global numpy array it freezes
    into the kernel when it first compiles it; a list, dict or other object it does not compile at
    all. Exact types only, and only the libraries' own modules, classes and functions: a class
    attribute, a module the cell made, an int subclass with attributes or a bound list.copy held A
    and B for a naive kernel that counted no reads (red team, stop 34)."""
    t = type(v)
    if t in _PLAIN_CONSTANTS:
        return True
    if t is tuple:
        return all(_constant(x) for x in v)
    if t is types.ModuleType:
        return v is not builtins and _library_module(v)
    if isinstance(v, (np.number, np.bool_, np.dtype)):
        return t.__module__.split(".")[0] == "numpy" and _genuine(t)
    if isinstance(v, type):
        if v.__module__ == "builtins":
            return getattr(builtins, v.__name__, None) is v and v.__name__ in _KERNEL_BUILTINS
        # numpy's scalar types (np.float32(x)) only: a class's attributes are read unchecked, and
        # numba.core.utils.ConfigOptions.OPTIONS, a plain dict on a genuine numba class, was a
        # board every thread and launch shared (red team, stop 39: histogram 0 -> 8)
        return v.__module__.split(".")[0] == "numpy" and issubclass(v, np.generic) and _genuine(v)
    if t is types.BuiltinFunctionType:  # math.sqrt, min: their __self__ is their module
        if v.__self__ is builtins:
            return getattr(builtins, v.__name__, None) is v and v.__name__ in _KERNEL_BUILTINS
        return v.__self__ is None or _library_module(v.__self__)
    # numba's own objects that a kernel compiles: its types (float32) and a device function's
    # dispatcher, genuinely numba's; not any numba object: ``numba.extending.as_numba_type.lookup``
    # is a plain dict that every thread shared as a board (red team, stop 38: histogram 0 -> 8)
    if not (t.__module__.split(".")[0] == "numba" and _genuine(t)):
        return False
    from numba.core import types as numba_types

    return isinstance(v, numba_types.Type) or hasattr(v, "py_func")


# What each kernel (and device function) read from its globals, closure and defaults at its first
# launch in this process. numba compiles a kernel once and freezes those values into it; a kernel
# whose global flag the launcher flipped around its own launch computed nothing there and the
# right answer when run alone (red team, stop 35: histogram, dot_reduction, tiled_matmul at full
# marks with the work done on the host).
_FIRST_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _same(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b) or (a != a and b != b)  # NaN stays NaN
    except Exception:  # noqa: BLE001 - a value that cannot say: not the same
        return False


def _device_functions(v):
    """The device functions in a captured value: itself, or those in a tuple, at any depth."""
    if type(v) is tuple:
        for x in v:
            yield from _device_functions(x)
    elif not isinstance(v, type) and (hasattr(v, "py_func") or type(v).__name__ == "FakeCUDAKernel"):
        try:
            yield python_function(v)
        except KernelFault:
            return


def _check_captured(fn: types.FunctionType, g: dict, seen: set | None = None) -> None:
    """A kernel reads its data from its arguments, where every access is checked and counted. One
    that read A and B from a list the launcher filled counted no global reads and a copy of C could
    pass as its result, on a simulator where numba would not compile it (red team, stop 33). Every
    device function it can reach (a global, in a closure, a default, a tuple) is held to the same:
    one in a closure or a tuple ran unchecked (red team, stop 36)."""
    seen = set() if seen is None else seen
    if fn in seen:
        return
    seen.add(fn)
    _check_code(fn, g)
    captured = [(n, g[n]) for n in sorted(code_global_names(fn.__code__)) if n in g]
    captured += [(n, closure_value(c)) for n, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())]
    captured += [(f"a default ({d!r:.20})", d) for d in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values())]
    first = _FIRST_SEEN.setdefault(fn, dict(captured))
    for name, value in captured:
        if name in first and not _same(first[name], value):
            raise KernelFault(
                f"{fn.__name__} reads `{name}`, which was {first[name]!r:.40} at its first launch and is "
                f"{value!r:.40} now: numba compiles a kernel once, with the global values it saw then, so "
                "on a GPU this launch would still see the old value. Pass a value that changes as an argument",
                "global",
            )
        for device_fn in _device_functions(value):
            _check_captured(device_fn, dict(device_fn.__globals__), seen)
        if not _constant(value):
            kind = "a numpy array" if isinstance(value, np.ndarray) else f"a {type(value).__name__}"
            if isinstance(value, types.FunctionType):
                kind = "a Python function, not a device function (@cuda.jit(device=True)),"
            raise KernelFault(
                f"{fn.__name__} reads `{name}`, {kind} it did not get as an argument: a CUDA kernel reads "
                "its data from its arguments (numba freezes a global array into the kernel when it first "
                "compiles it, and compiles no list, dict or other object). Pass it as an argument",
                "global",
            )


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
        launch.args = tuple(wrapped)
        for w, _ in writers.values():
            w[:] = [-1] * len(w)
        stats: list[ThreadStats] = []
        try:
            launch.fn = _rebind(fn, fake, {})
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
