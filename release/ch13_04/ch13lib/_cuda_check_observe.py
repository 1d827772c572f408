"""Observations of the student's functions (a part of :mod:`ch13lib.cuda_check`): the ``observe_*``
functions run a launcher or kernel (on the checking simulator, or for real) beside the student's code
and return plain data only; an :class:`Ask` runs them here (:func:`local`) or wherever the one who
made it observes. The checks that judge this data, in their own process, are in ``cuda_check``.
"""

from __future__ import annotations

import re
import sys
import types

import numpy as np

from ch13lib.cuda_sim import KernelFault, Spy, launch, python_function, spying
from ch13lib.lang import Messages

# What an observation says itself (the checks' sentences are cuda_check's), in the course's language.
M = Messages(
    not_defined=("`{name}` 未定义", "`{name}` is not defined"),
    ran=("运行的是:", "It ran:"),  # then the code, said once in any language
    replay=("重现:", "Replay it:"),
)

REPR_CAP = 200  # a launch configuration is reported as its repr, cut to this length
# A kernel launched here directly gets the shared memory any block may use without opting in, so
# one that sizes its array by the launch (cuda.shared.array(0, dtype)) runs as its launcher runs it.
DIRECT_SHARED_BYTES = 48 * 1024
ARRAY_CAP = 16 * 2**20  # bytes: a bigger array is reported by shape and dtype only (no case needs one)
# dtypes an observation sends back as arrays (the others are reported by name only)
SENDABLE = frozenset(  # kit/wire.py's dtypes less bfloat16, which numpy lacks
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64 complex128".split()
)


class CheckFailed(AssertionError):
    """A case failed; the message says why and how to replay it. ``accesses``: the checking
    simulator's record of who touched what up to a fault, drawn by :attr:`picture`."""

    accesses: dict | None = None
    replay: str | None = None  # the line that runs this check again here (:func:`replayable`)

    @property
    def picture(self) -> bytes:
        if not self.accesses:
            return b""
        from ch13lib.pictures import cuda_accesses

        return cuda_accesses(self.accesses, str(self))


def _replay(call: str) -> str:
    """What the failing case ran, as lines a student can read (the replay line comes from
    :func:`replayable`, which runs the same check on the checking simulator)."""
    makers = sorted(set(re.findall(r"\b((?:vec|mat|hist|dot)_inputs)\(", call)))
    head = f"from ch13lib.cuda_check import {', '.join(makers)}; " if makers else ""
    return f"\n{M('ran')} {head}{call}"


def replayable(check):
    """A public check whose failure ends with its replay line: the same check on the same case, on
    the checking simulator, over the notebook's own functions (:func:`here`), so pasting it shows
    the same failure (numba's own simulator runs a race or a missing barrier without a word)."""
    import functools
    import inspect

    sig = inspect.signature(check)

    @functools.wraps(check)
    def run(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except CheckFailed as e:
            if e.replay is None:
                bound = sig.bind(*args, **kwargs)
                shown, keyword = [], False
                for name, value in list(bound.arguments.items())[1:]:  # not ask: the replay observes here
                    param = sig.parameters[name]
                    if name == "device" or (param.default is not param.empty and value == param.default):
                        keyword = True  # a parameter left out: the ones after it are named
                        continue
                    keyword = keyword or param.kind is param.KEYWORD_ONLY
                    shown.append(f"{name}={value!r}" if keyword else repr(value))
                e.replay = (
                    f"from ch13lib.cuda_check import {check.__name__}, here; "
                    f"{check.__name__}(here(), {', '.join(shown)})"
                )
                e.args = (f"{e.args[0]}\n{M('replay')} {e.replay}",)
            raise

    return run


def here() -> "Ask":
    """Observe the notebook's own functions (its ``__main__``) right here, on the checking simulator:
    what a replay line runs."""
    main = sys.modules["__main__"]
    return Ask(lambda op, **case: OBSERVE[op](types.SimpleNamespace(**vars(main)), **case))


def _fault_failed(e: KernelFault, replay: str, ran: list) -> CheckFailed:
    failed = CheckFailed(f"{e.message}{_replay(replay)}")
    failed.accesses = getattr(e, "accesses", None)
    failed.kernels = ran  # the kernels run up to the fault: the judge compiles them first
    return failed


# ---------------------------------------------------------------------------------------------
# observations: run beside the student's functions, return plain data only


def _short(x) -> str:
    """A launch configuration as the student wrote it (its repr), for messages."""
    try:
        r = repr(x)
        r = r if type(r) is str else "?"
    except Exception:  # noqa: BLE001 - a __repr__ that raises
        r = f"<a {type(x).__name__}>"
    return r[:REPR_CAP]


def _array(x):
    """A plain copy of a numpy array whose dtype can be sent back; None for anything else."""
    if isinstance(x, np.ndarray) and str(x.dtype) in SENDABLE and x.nbytes <= ARRAY_CAP:
        return np.array(x, copy=True, subok=False)
    return None


def _describe(c, inputs) -> dict:
    """What a launcher returned: its type, and for an array its shape, dtype, values, and which
    inputs (by position) it shares memory with."""
    if isinstance(c, (float, np.floating, int, np.integer)) and not isinstance(c, bool):
        return {"type": type(c).__name__, "value": float(c) if isinstance(c, (float, np.floating)) else int(c)}
    if not isinstance(c, np.ndarray):
        return {"type": type(c).__name__}
    return {
        "type": "ndarray",
        "shape": tuple(int(s) for s in c.shape),
        "dtype": str(c.dtype),
        "value": _array(c),
        "shares": [i for i, a in enumerate(inputs) if c.size and np.shares_memory(c, a)],
    }


def _lookup(ns, name: str):
    try:
        return getattr(ns, name)
    except AttributeError:
        raise CheckFailed(M("not_defined", name=name)) from None


def _param_name(kernel, pos: int):
    """The name of the kernel's parameter at ``pos`` (for reading the launch's writer maps)."""
    try:
        return python_function(kernel).__code__.co_varnames[pos]
    except (KernelFault, IndexError, AttributeError):
        return None


def _stats(rec) -> dict:
    th = rec.threads
    out = {
        "block": np.array([t.block for t in th], np.int32).reshape(-1, 3),
        "thread": np.array([t.thread for t in th], np.int32).reshape(-1, 3),
    }
    for field in ("global_reads", "global_writes", "global_atomics", "shared_reads", "shared_writes"):
        out[field] = np.array([getattr(t, field) for t in th], np.int64)
    return out


def _launches(spy: Spy, out_pos, stats: bool) -> list[dict]:
    """Each launch: griddim and blockdim (3-tuples, None when invalid), the configuration as
    written, and on the checking simulator which thread (global linear id, -1 none) wrote each
    element of the output argument, and the per-thread traffic if asked."""
    param = _param_name(spy.kernel, out_pos) if out_pos is not None else None
    out = []
    for i, ((g, b, rec), (raw_g, raw_b)) in enumerate(zip(spy.launches, spy.raw_configs)):
        item = {"griddim": g, "blockdim": b, "raw": (_short(raw_g), _short(raw_b))}
        if rec is not None:
            # "out" is what the kernel made on its own (cuda_sim.Spy._own_outputs); prefilled: the
            # launcher's array held something else
            item["prefilled"] = bool(spy.prefilled[i]) if i < len(spy.prefilled) else False
            w = rec.writers.get(param) if param is not None else None
            item["writers"] = None if w is None else _array(w.astype(np.int32))
            item["out"] = _array(rec.arrays.get(param)) if param is not None else None
            item["shared"] = [[str(n)[:80], [int(d) for d in shape], dt] for n, shape, dt in rec.shared]
            if stats:
                item["stats"] = _stats(rec)
        out.append(item)
    return out


def _spied(launch_fn, kernel_name: str, spy: Spy, args, replay: str):
    try:
        with spying(launch_fn, kernel_name, spy):
            result = launch_fn(*args)
    except KernelFault as e:
        raise _fault_failed(e, replay, spy.ran) from None
    if spy.fault is not None:  # a fault the launcher caught and swallowed
        raise _fault_failed(spy.fault, replay, spy.ran)
    return result


def observe_config(ns, launcher: str, kernel_name: str, args, replay: str = "") -> dict:
    """``ns.<launcher>(*args)`` with its kernel recorded, not run: the launch configurations."""
    spy = Spy(None, kernel_name, "record")
    _spied(_lookup(ns, launcher), kernel_name, spy, tuple(args), replay)
    return {"launches": _launches(spy, None, False), "kernels": spy.ran}


def observe_launcher(
    ns,
    launcher: str,
    kernel_name: str,
    args,
    device: str = "cpu",
    replay: str = "",
    *,
    readonly=(0, 1),
    out_pos: int = 2,
    stats: bool = False,
    source: tuple[str, str] | None = None,
) -> dict:
    """``ns.<launcher>(*args)`` with its kernel run on the checking simulator (cpu) or for real (gpu):
    the input arrays afterwards, what it returned, its launches, and the kernels the simulator ran
    with their argument types (``source``: the cell's text, the kernels' only source when grading)."""
    args = tuple(args)
    mode = "check" if device == "cpu" else "pass"
    spy = Spy(None, kernel_name, mode, readonly=tuple(readonly), outputs=(out_pos,), source=source)
    c = _spied(_lookup(ns, launcher), kernel_name, spy, args, replay)
    inputs = [a for a in args if isinstance(a, np.ndarray)]
    return {
        "inputs": [_array(a) for a in inputs],
        "result": _describe(c, inputs),
        "launches": _launches(spy, out_pos, stats),
        "kernels": spy.ran,
    }


def observe_kernel(
    ns,
    kernel_name: str,
    griddim,
    blockdim,
    args,
    device: str = "cpu",
    replay: str = "",
    *,
    readonly=(),
    limits=None,
    out_pos: int = 2,
    stats: bool = False,
    source: tuple[str, str] | None = None,
) -> dict:
    """``ns.<kernel_name>[griddim, blockdim](*args)`` directly: the array arguments afterwards, and on
    the checking simulator which thread wrote each element of the argument at ``out_pos`` (and, with
    ``stats``, each thread's memory traffic), and the kernel run with its argument types."""
    kernel = _lookup(ns, kernel_name)
    args = tuple(args)
    if device == "cpu":
        ran: list = []
        try:
            rec = launch(
                kernel,
                griddim,
                blockdim,
                args,
                readonly=tuple(readonly),
                limits=limits,
                dynamic_shared=DIRECT_SHARED_BYTES,
                source=source,
                ran=ran,
            )
        except KernelFault as e:
            raise _fault_failed(e, replay, ran) from None
        w = rec.writers.get(_param_name(kernel, out_pos))
        return {
            "args": [_array(a) for a in args if isinstance(a, np.ndarray)],
            "writers": None if w is None else _array(w.astype(np.int32)),
            "kernels": ran,
            **({"stats": _stats(rec)} if stats else {}),
        }
    import cupy as cp

    dev = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel[griddim, blockdim](*dev)
    cp.cuda.runtime.deviceSynchronize()
    return {"args": [cp.asnumpy(d) for d, a in zip(dev, args) if isinstance(a, np.ndarray)], "writers": None}


def observe_as_is(ns, launcher: str, args) -> dict:
    """``ns.<launcher>(*args)`` unchanged, on whatever numba.cuda is in this process (numba's own
    simulator on a CPU, the GPU on a GPU machine): the inputs afterwards and what it returned."""
    args = tuple(args)
    c = _lookup(ns, launcher)(*args)
    inputs = [a for a in args if isinstance(a, np.ndarray)]
    return {"inputs": [_array(a) for a in inputs], "result": _describe(c, inputs)}


OBSERVE = {"config": observe_config, "launcher": observe_launcher, "kernel": observe_kernel, "as_is": observe_as_is}


class Ask:
    """Where a check's observations run: ``ask(op, **case)`` -> the plain data of ``observe_<op>``.
    ``admit(op, case, obs)``, where given, judges an observation before any check reads it (the
    grading's compile check of the kernels it ran) and raises CheckFailed to refuse it."""

    def __init__(self, observe, admit=None) -> None:
        self._observe = observe
        self._admit = admit

    def __call__(self, op: str, **case) -> dict:
        obs = self._observe(op, **case)
        if type(obs) is dict and type(obs.get("fault")) is dict:  # a fault seen where the cell runs
            if self._admit is not None and type(obs["fault"].get("kernels")) is list:
                self._admit(op, case, obs["fault"])  # a kernel numba refuses: that is the reason
            failed = CheckFailed(str(obs["fault"].get("message", "")))
            failed.accesses = obs["fault"].get("accesses") if type(obs["fault"].get("accesses")) is dict else None
            raise failed
        if self._admit is not None:
            self._admit(op, case, obs)
        return obs


def local(**functions) -> Ask:
    """Observe these functions right here (the notebook's self-checks):
    ``check_vec_add_results(local(launch_vec_add=launch_vec_add), 37, 16)``."""
    ns = types.SimpleNamespace(**functions)
    return Ask(lambda op, **case: OBSERVE[op](ns, **case))


def _asked(target, name: str) -> Ask:
    """An Ask as given, or the student's function itself (``check_matmul_results(launch_tiled_matmul,
    1, 33, 3)`` in a notebook), observed here under its contract name."""
    return target if isinstance(target, Ask) else local(**{name: target})
