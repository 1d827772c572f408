"""The device a simulated kernel runs on (a part of :mod:`ch13lib.cuda_sim`): global and shared
arrays with every access checked, counted and logged (for the picture of a fault), atomics, and
``cuda`` as the kernel sees it. All of it runs inside the kernel's own calls and reads the one
running thread, ``_current``; the launch (``_cuda_sim_launch``), which decides which thread runs
when, sets it.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

import numpy as np

from ch13lib.lang import Both, Messages, say

if TYPE_CHECKING:
    from ch13lib._cuda_sim_launch import _SimThread

WARP_SIZE = 32
MAX_GLOBAL_ACCESSES_PER_THREAD = 200_000  # a thread past this is stuck in an endless loop (a step budget)
ATOMIC = -3  # in a global array's writer list: the element was updated with cuda.atomic (by any thread)
LOG_CAP = 8_000  # accesses kept per block for the picture of a fault (ch13lib/pictures.py)

# What the checking simulator says of a fault, in the course's language (ch13lib/lang.py). A fault
# reads "<the thread>: <what it did>" (the thread: _cuda_sim_launch's WHO).
M = Messages(
    read=("读取", "read"),
    wrote=("写入", "wrote"),
    atomically=("原子更新", "atomically updated"),
    other_threads=("其他线程", "other threads"),
    atomic_writers=("其他线程的 cuda.atomic 更新", "other threads' cuda.atomic updates"),
    sliced=(
        "对 {name}[...] 做了切片: 检查模拟器在核函数中只支持整数下标 (每次访问一个元素)",
        "sliced {name}[...]: the checking simulator only supports integer indices in kernels (index one element "
        "at a time)",
    ),
    not_integer=(
        "用 {index} (一个 {type}) 作为 {name} 的下标: 数组下标必须是整数",
        "indexed {name} with {index} (a {type}): array indices must be integers",
    ),
    dimensions=("{what} {label}: {name} 只有 {n} 个维度", "{what} {label}: {name} has only {n} dimension(s)"),
    negative=(
        "{what} {label}: 负下标。numpy 和 numba 会悄悄把它绕到数组的另一端 (下标 {i} + {size}); 在 GPU 上这是"
        "数组之外的读写。请检查下标的计算。",
        "{what} {label}: negative index. numpy and numba silently wrap it to the other end of the array (index {i} "
        "+ {size}); on a GPU it is a read or write outside the array. Check your index arithmetic.",
    ),
    bounds_global=(
        "{what} {label}: 越界, 全局数组 {name} 的形状是 {shape} (漏了边界检查?)",
        "{what} {label}: out of bounds for global array {name} of shape {shape} (a missing bounds check?)",
    ),
    bounds_shared=(
        "{what} {label}: 越界, 共享数组 {name} 的形状是 {shape}",
        "{what} {label}: out of bounds for shared array {name} of shape {shape}",
    ),
    past_n=(
        "{what} {label}, 但 n = {n}: 这里数组比 n 长, 任何线程都不能访问第 n 个及以后的元素。用 `if i < n` "
        "保护, 用 n, 而不是数组的大小。",
        "{what} {label} although n = {n}: the array is longer than n here, and no thread may touch element n or "
        "beyond. Guard with `if i < n`, using n, not the array's size.",
    ),
    two_barriers=(
        "一个线程写共享内存单元与另一个线程读或写同一单元之间, 必须隔着一个 cuda.syncthreads(): 分块 (tiled) "
        "核函数每个分块需要两个 (一个在加载分块之后、任何线程读取之前, 一个在用它计算完之后、下一个分块覆盖它"
        "之前); 归约树在加载之后和每一层之后各需要一个。",
        "A cuda.syncthreads() must stand between one thread's write of a shared cell and another thread's read or "
        "write of it: in a tiled kernel two per tile (after loading it, before any thread reads it, and after "
        "computing with it, before the next tile overwrites it); in a reduction tree one after the load and one "
        "after every level.",
    ),
    read_atomic=(
        "用普通加载读取 {label}, 而本次启动中有线程正用 cuda.atomic 更新它: 数据竞争 (在 GPU 上这次加载能看到"
        "其中哪些更新全凭运气; `cuda.atomic.max(bins, v, bins[v] + 1)` 就这样丢失更新)。让原子操作完成整个"
        "读-改-写: cuda.atomic.add(bins, v, 1)",
        "read {label} with a plain load while threads update it with cuda.atomic in this launch: a data race (on "
        "a GPU the load sees some of the updates, by luck; `cuda.atomic.max(bins, v, bins[v] + 1)` loses updates "
        "so). Let the atomic do the read-modify-write: cuda.atomic.add(bins, v, 1)",
    ),
    read_race=(
        "读取 {label} 时, {other} 在同一阶段写入了它, 写与读之间没有 cuda.syncthreads(): 数据竞争 (在 GPU 上"
        "读到旧值还是新值全凭运气)。\n{barriers}",
        "read {label} in the same phase as {other} wrote it, with no cuda.syncthreads() between the write and the "
        "read: a data race (on a GPU it reads the old or the new value, by luck).\n{barriers}",
    ),
    whole_row=("写入整行 {label}: 请逐个元素赋值", "wrote a whole row {label}: assign one element at a time"),
    input=(
        "写入 {label}: {name} 是核函数的输入, 不能改变 (结果只写入输出数组)",
        "wrote {label}: {name} is an input of the kernel and must not change (write results to the output array only)",
    ),
    store_atomic=(
        "用普通存储写入 {label}, 而本次启动中其他线程正用 cuda.atomic 更新它: 这次普通写入与它们竞争 (更新会"
        "丢失)。也请用 cuda.atomic.add 更新它。",
        "wrote {label} with a plain store while other threads update it with cuda.atomic in this launch: the "
        "plain write races with them (updates get lost). Update it with cuda.atomic.add as well.",
    ),
    lost_update=(
        "先读后写 {label} (一次读-改-写, 例如 `{name}[i] += 1`), 而{other} 在本次启动中也更新了它。\n在 GPU 上"
        "两个线程可能读到同一个旧值, 其中一次更新会丢失。本模拟器逐个运行线程, 所以这里的计数碰巧是对的; GPU "
        "没有这样的保证。请用 cuda.atomic.add({name}, index, value), 一次不可分割的读-改-写。",
        "read and then wrote {label} (a read-modify-write such as `{name}[i] += 1`), which {other} also updated in "
        "this launch.\nOn a GPU both threads can read the same old value and one update is lost. This simulator "
        "runs threads one after another, so the count happens to come out right here; a GPU gives no such "
        "promise. Use cuda.atomic.add({name}, index, value), one indivisible read-modify-write.",
    ),
    duplicate=(
        "写入 {label}, 而{other} 在本次启动中也写了它: 两个线程不能写同一个元素 ({hint})",
        "wrote {label}, which {other} also wrote in this launch: two threads must not write one element ({hint})",
    ),
    write_race=(
        "写入 {label} 时, {other} 在同一阶段也写入了它: 数据竞争。\n{barriers}",
        "wrote {label} in the same phase as {other} wrote it: a data race.\n{barriers}",
    ),
    write_after_read=(
        "写入 {label} 时, {who} 在同一阶段读取了它, 中间没有 cuda.syncthreads(): 数据竞争 (在 GPU 上那次读取"
        "看到的是写入之前还是之后的值全凭运气)。\n{barriers}",
        "wrote {label} in the same phase as {who} read it, with no cuda.syncthreads() between: a data race (on a "
        "GPU whether that read sees the value before or after this write is luck).\n{barriers}",
    ),
    step_one=(
        "循环每次只前进 {step} 个元素, 少于网格的 {total} 个线程, 于是线程会重做彼此的元素: 步长应为整个网格, "
        "cuda.gridsize(1) = 线程块数 x 每块线程数 = {total}",
        "the loop steps by {step} element, fewer than the {total} threads of the grid, so threads redo each "
        "other's elements: step by the whole grid, cuda.gridsize(1) = blocks x threads per block = {total}",
    ),
    step=(
        "循环每次只前进 {step} 个元素, 少于网格的 {total} 个线程, 于是线程会重做彼此的元素: 步长应为整个网格, "
        "cuda.gridsize(1) = 线程块数 x 每块线程数 = {total}",
        "the loop steps by {step} elements, fewer than the {total} threads of the grid, so threads redo each "
        "other's elements: step by the whole grid, cuda.gridsize(1) = blocks x threads per block = {total}",
    ),
    same_block=(
        "两个线程在同一个线程块中: 如果线程块只有一个值要写, 就让一个线程写它 (`if cuda.threadIdx.x == 0:`); "
        "否则每个线程负责自己的下标",
        "both threads are in the same block: if the block has one value to write, let one thread write it (`if "
        "cuda.threadIdx.x == 0:`); otherwise each thread owns its own index",
    ),
    own_index=(
        "每个线程负责自己的下标; 下标里算上线程块索引了吗?",
        "each thread owns its own index; is the block index part of it?",
    ),
    endless=(
        "进行了超过 {limit} 次全局内存访问: 死循环? (网格跨步循环的步长必须是整个网格, 即 cuda.gridsize(1), "
        "它永远不为 0)",
        "made more than {limit} global memory accesses: an endless loop? (in a grid-stride loop the step must be "
        "the whole grid, cuda.gridsize(1), which is never 0)",
    ),
    atomic_store=(
        "原子更新 {label}, 而{other} 在本次启动中用普通存储写过它: 普通写入与原子更新竞争。请在所有地方都用 "
        "cuda.atomic 更新它。",
        "atomically updated {label}, which {other} wrote with a plain store in this launch: the plain write races "
        "with the atomic updates. Update it with cuda.atomic everywhere.",
    ),
    atomic_after_store=(
        "原子更新 {label} 时, {other} 在同一阶段用普通存储写入了它, 中间没有 cuda.syncthreads(): "
        "数据竞争。\n{barriers}",
        "atomically updated {label} in the same phase as {other} wrote it with a plain store, with no "
        "cuda.syncthreads() between: a data race.\n{barriers}",
    ),
    atomic_after_load=(
        "原子更新 {label} 时, {who} 在同一阶段用普通加载读取了它, 中间没有 cuda.syncthreads(): 数据竞争。\n{barriers}",
        "atomically updated {label} in the same phase as {who} read it with a plain load, with no "
        "cuda.syncthreads() between: a data race.\n{barriers}",
    ),
    atomic_input=(
        "原子更新 {label}: {name} 是核函数的输入",
        "atomically updated {label}: {name} is an input of the kernel",
    ),
    unsupported=(
        "检查模拟器不支持在核函数中使用 cuda.{name} (练习只需要 threadIdx, blockIdx, blockDim, gridDim, grid, "
        "gridsize, shared.array, local.array 和 syncthreads)",
        "cuda.{name} is not supported inside kernels by the checking simulator (the exercises need threadIdx, "
        "blockIdx, blockDim, gridDim, grid, gridsize, shared.array, local.array and syncthreads)",
    ),
)


class KernelFault(Exception):
    """The kernel did something a GPU would not forgive (or would silently get wrong)."""

    def __init__(self, message: str, kind: str = "fault") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


class Dim3:
    __slots__ = ("x", "y", "z")

    def __init__(self, x: int, y: int = 1, z: int = 1) -> None:
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self) -> str:
        return f"({self.x}, {self.y}, {self.z})"


_current: _SimThread | None = None  # the one simulated thread running now (the launch sets it)


def at(where: Both, what: Both) -> str:
    """A fault as the student reads it: the thread, then what it did, in each language."""
    return say(f"{where[0]}: {what[0]}", f"{where[1]}: {what[1]}")


def _fault(kind: str, key: str, **fields):
    """Record the first fault of the launch (``M(key, **fields)``) and raise it in the running thread."""
    t = _current
    launch = t.launch
    fault = KernelFault(at(t.where(), M.both(key, **fields)), kind)
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
                _fault("index", "sliced", name=arr_name)
            _fault("index", "not_integer", name=arr_name, index=repr(i), type=type(i).__name__)
        out.append(int(i))
    return out


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
                "index",
                "dimensions",
                what=M.both(what),
                label=self._label(idx),
                name=self._name,
                n=self.ndim + len(self._prefix),
            )
        for d, i in enumerate(idx):
            if i < 0:
                _current.launch.bad_index = [self._name, self._space, list(self._prefix) + list(idx)]
                _fault("negative", "negative", what=M.both(what), label=self._label(idx), i=i, size=self.shape[d])
            if i >= self.shape[d]:
                _current.launch.bad_index = [self._name, self._space, list(self._prefix) + list(idx)]
                _fault(
                    "bounds",
                    "bounds_global" if self._space == "global" else "bounds_shared",
                    what=M.both(what),
                    label=self._label(idx),
                    name=self._name,
                    shape=tuple(self.shape),
                )
        if self._limit is not None and idx and idx[0] >= self._limit:
            _current.launch.bad_index = [self._name, self._space, list(self._prefix) + list(idx)]
            _fault("bounds", "past_n", what=M.both(what), label=self._label(idx), n=self._limit)
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
            if self._writer is not None and self._writer[pos] == ATOMIC:
                _fault("race", "read_atomic", label=self._label(idx))
            t.last_read = (self._writer, pos)
        else:
            t.stats.shared_reads += 1
            init, w_epoch, writer, r_epoch, reader = self._state
            e = t.epoch
            if not init[pos]:
                # Judged at the end of the phase: if another thread writes the cell later in this
                # phase, that write reports a race (a missing barrier); otherwise it is garbage.
                t.launch.pending_uninit.append((t, self._label(idx)))
            if w_epoch[pos] == e and writer[pos] != t.tid:
                other = _writer_name(t, writer[pos])
                _fault("race", "read_race", label=self._label(idx), other=other, barriers=M.both("two_barriers"))
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
            _fault("index", "whole_row", label=self._label(idx))
        t = _current
        if self._readonly:
            _fault("input", "input", label=self._label(idx), name=self._name)
        _log(t, self, pos, "w")
        if self._space == "global":
            t.stats.global_writes += 1
            if t.stats.global_writes > MAX_GLOBAL_ACCESSES_PER_THREAD:
                _endless(t)
            w = self._writer
            if w is not None:
                prev = w[pos]
                if prev == ATOMIC:
                    _fault("race", "store_atomic", label=self._label(idx))
                if prev != -1 and prev != t.gid:
                    other = t.launch.thread_name_gid(prev)
                    last = t.last_read
                    if last is not None and last[0] is w and last[1] == pos:
                        _fault("lost-update", "lost_update", label=self._label(idx), name=self._name, other=other)
                    hint = _duplicate_hint(t, w, prev, pos)
                    _fault("duplicate", "duplicate", label=self._label(idx), other=other, hint=hint)
                w[pos] = t.gid
        else:
            t.stats.shared_writes += 1
            init, w_epoch, writer, r_epoch, reader = self._state
            e = t.epoch
            if w_epoch[pos] == e and writer[pos] != t.tid:
                other = _writer_name(t, writer[pos])
                _fault("race", "write_race", label=self._label(idx), other=other, barriers=M.both("two_barriers"))
            if r_epoch[pos] == e and reader[pos] != t.tid:
                who = M.both("other_threads") if reader[pos] == -2 else t.launch.thread_name(t, reader[pos])
                _fault("race", "write_after_read", label=self._label(idx), who=who, barriers=M.both("two_barriers"))
            init[pos] = True
            w_epoch[pos] = e
            writer[pos] = t.tid
        self._arr[idx] = value


def _writer_name(t, writer: int) -> Both:
    return M.both("atomic_writers") if writer == ATOMIC else t.launch.thread_name(t, writer)


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


def _duplicate_hint(t, writer: list, prev: int, pos: int) -> Both:
    """Why two threads met at one element: their index misses the block (each thread writes once),
    or, in a loop, the step is smaller than the whole grid (the grid-stride loop's cuda.gridsize)."""
    launch = t.launch
    if launch.ndim == 1:
        total = math.prod(launch.griddim) * math.prod(launch.blockdim)
        for gid, extra in ((prev, ()), (t.gid, (pos,))):  # the steps of either thread's loop
            mine = sorted(set(i for i, g in enumerate(writer) if g == gid).union(extra))
            step = min((b - a for a, b in zip(mine, mine[1:])), default=0)
            if 0 < step < total:
                return M.both("step" if step > 1 else "step_one", step=step, total=total)
    if prev // math.prod(launch.blockdim) == t.gid // math.prod(launch.blockdim):
        return M.both("same_block")
    return M.both("own_index")


def _endless(t):
    _fault("budget", "endless", limit=f"{MAX_GLOBAL_ACCESSES_PER_THREAD:,}")


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
            if shape == 0 or shape == (0,):  # dynamic: sized by the launch's fourth parameter, in bytes
                shape = t.launch.dynamic_shared // _as_dtype(dtype).itemsize
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
            idx, pos = array._locate(index, "atomically")
            t = _current
            stats = t.stats
            if array._space == "global":
                stats.global_reads += 1
                stats.global_writes += 1
                stats.global_atomics += 1
                w = array._writer
                if w is not None:
                    prev = w[pos]
                    if prev >= 0 and prev != t.gid:
                        _fault("race", "atomic_store", label=array._label(idx), other=t.launch.thread_name_gid(prev))
                    if prev == -1:  # a plain writer stays recorded: another thread's atomic there is a race
                        w[pos] = ATOMIC
            else:
                stats.shared_reads += 1
                stats.shared_writes += 1
                init, w_epoch, writer, r_epoch, reader = array._state
                e = t.epoch
                # atomics of one phase do not race with each other, but with another thread's plain
                # store or load of the cell in the same phase they do (a cell zeroed by thread 0 with no
                # barrier before the others' atomic adds races with them)
                if w_epoch[pos] == e and writer[pos] not in (t.tid, ATOMIC):
                    _fault(
                        "race",
                        "atomic_after_store",
                        label=array._label(idx),
                        other=t.launch.thread_name(t, writer[pos]),
                        barriers=M.both("two_barriers"),
                    )
                if r_epoch[pos] == e and reader[pos] != t.tid:
                    who = M.both("other_threads") if reader[pos] == -2 else t.launch.thread_name(t, reader[pos])
                    _fault(
                        "race", "atomic_after_load", label=array._label(idx), who=who, barriers=M.both("two_barriers")
                    )
                init[pos] = True
                if w_epoch[pos] != e or writer[pos] != t.tid:
                    w_epoch[pos], writer[pos] = e, ATOMIC
            _log(t, array, pos, "a")
            if array._readonly:
                _fault("input", "atomic_input", label=array._label(idx), name=array._name)
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
        raise AttributeError(M("unsupported", name=name))
