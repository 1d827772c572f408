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

This module is the public API and the spy on a launcher; the simulator itself is in two private
parts beside it: ``_cuda_sim_device`` (the arrays, atomics and ``cuda`` a running kernel touches,
each access checked) and ``_cuda_sim_launch`` (the threads, the order they run in, and the launch).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from ch13lib._cuda_sim_device import (
    ATOMIC,
    LOG_CAP,
    MAX_GLOBAL_ACCESSES_PER_THREAD,
    WARP_SIZE,
    Dim3,
    FakeCuda,
    KernelFault,
    SimArray,
)
from ch13lib._cuda_sim_launch import (
    MAX_SIMULATED_THREADS,
    MAX_THREADS_PER_BLOCK,
    LaunchRecord,
    ThreadStats,
    _to_host,
    arg_types,
    launch,
    normalize_dims,
    python_function,
)

__all__ = [
    "WARP_SIZE",
    "MAX_THREADS_PER_BLOCK",
    "MAX_SIMULATED_THREADS",
    "MAX_GLOBAL_ACCESSES_PER_THREAD",
    "ATOMIC",
    "LOG_CAP",
    "KernelFault",
    "Dim3",
    "normalize_dims",
    "ThreadStats",
    "SimArray",
    "FakeCuda",
    "python_function",
    "LaunchRecord",
    "launch",
    "Spy",
    "spying",
]


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
        outputs: Sequence[int] = (),
        source: tuple[str, str] | None = None,
    ) -> None:
        self.kernel, self.name, self.mode = kernel, name, mode
        self.source = source  # the cell's (text, file name): its kernels run as numba compiles them
        self.ran: list = []  # [kernel, argument types] of each simulated launch, replays included
        self.readonly, self.limits, self.outputs = tuple(readonly), limits, tuple(outputs)
        self.launches: list = []
        self.raw_configs: list = []
        self.fault: KernelFault | None = None  # the first fault, even if the launcher swallowed it
        # id of an output array -> (the array, its state after its last launch, the state the
        # kernel alone gave it from zeros): see _own_outputs
        self._made: dict = {}
        self.prefilled: list[bool] = []  # per launch: an output held what the kernel did not make
        self._shared = 0  # the current launch's dynamic shared memory, in bytes

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
            try:  # what this launch would have had numba compile, though it does not run
                self.ran.append(arg_types(self.kernel, args))
            except KernelFault as e:
                self.fault = self.fault or e
                raise
            return None
        try:
            g, b = normalize_dims(griddim, blockdim)
            if self.mode == "pass":
                self.launches.append((g, b, None))
                return self.kernel[config](*args)
            before = [_host_copy(a) for a in args]
            self._shared = config[3] if len(config) == 4 else 0
            record = self._run(griddim, blockdim, args)
            prefilled = self._own_outputs(griddim, blockdim, args, before, record)
        except KernelFault as e:
            self.fault = self.fault or e
            raise
        self.launches.append((g, b, _snapshot(record)))
        self.prefilled.append(prefilled)
        return None

    def _run(self, griddim, blockdim, args) -> LaunchRecord:
        return launch(
            self.kernel,
            griddim,
            blockdim,
            args,
            readonly=self.readonly,
            limits=self.limits,
            dynamic_shared=self._shared,
            source=self.source,
            ran=self.ran,
        )

    def _own_outputs(self, griddim, blockdim, args, before, record) -> bool:
        """Make the record's output arrays what the kernel makes of the launcher's own inputs on
        its own: from zeros, or from what it made in an earlier launch of the same array left
        unchanged. Where the launcher's array held anything else before the launch, the launch is
        run again from there on copies (no cost otherwise: the same inputs give the same run).
        The kernel, not the host, must compute the results: neither results filled on the host before
        the launch nor a path only the launcher's own launch takes count as the kernel's work. True when
        a replay changed an output."""
        outs = [p for p in self.outputs if p < len(args) and before[p] is not None]
        params = python_function(self.kernel).__code__.co_varnames
        start, replay = {}, False
        for p in outs:
            made = self._made.get(id(args[p]))
            if made is not None and made[0] is args[p] and _equal(made[1], before[p]):
                start[p] = made[2]  # continues an earlier launch of this array
            else:
                start[p] = np.zeros_like(before[p])
            replay |= not _equal(start[p], before[p])
        after = {p: _host_copy(args[p]) for p in outs}
        own = dict(after)
        if replay:
            again = [
                start[p].copy() if p in start else a if before[p] is None else before[p].copy()
                for p, a in enumerate(args)
            ]
            alone = self._run(griddim, blockdim, again)
            _same_work(self.name, record, alone, params, outs)
            own = {p: again[p] for p in outs}
        changed = False
        for p in outs:
            self._made[id(args[p])] = (args[p], after[p], own[p])
            if not _equal(own[p], after[p]):
                changed = True
                if p < len(params) and params[p] in record.arrays:
                    record.arrays[params[p]] = own[p]
        return changed


_WORK = ("global_reads", "global_writes", "global_atomics", "shared_reads", "shared_writes")


def _same_work(name: str, record: LaunchRecord, alone: LaunchRecord, params, outs) -> None:
    """Every thread did the same accesses in the launcher's launch as on the same inputs with its
    output zeroed: the kernel's work may not depend on what the host left in its output."""
    for mine, ref in zip(record.threads, alone.threads):
        for field in _WORK:
            a, b = getattr(mine, field), getattr(ref, field)
            if a != b:
                out = " or ".join(f"`{params[p]}`" for p in outs if p < len(params)) or "its output"
                raise KernelFault(
                    f"{name} did other work in the launcher's launch than on the same inputs with {out} "
                    f"zeroed: thread {mine.thread} of block {mine.block} made {a} {field.replace('_', ' ')} "
                    f"there and {b} here. A kernel must not depend on what its output held before the launch "
                    "(values the host put there): allocate it zeroed (np.zeros) and let the kernel compute it",
                    "global",
                )


def _host_copy(a):
    """A host copy of an array argument (numpy, or a device array); None for anything else."""
    if isinstance(a, np.ndarray):
        return np.array(a, copy=True)
    if hasattr(a, "__cuda_array_interface__"):
        return np.array(_to_host(a), copy=True)
    return None


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


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
