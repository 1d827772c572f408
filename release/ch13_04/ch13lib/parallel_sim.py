"""Harnesses of notebook 07: run an answer on the simulated process group or a real world, observe.

Each ``observe_*`` function runs in the process that holds the answer cell (the subject, or the
student's notebook for the self-checks): it builds the case's inputs, runs the cell's function on
every rank of a :class:`ch13lib.procgroup.SimWorld` and returns what it saw as plain data (each
rank's tensors and return value, the comm calls each rank made, the schedule on the logical clock).
It decides nothing; ``ch13lib.parallel_cases`` (and the hidden graders) do. The ``run_real_*``
functions are the same runs as one rank of a real torch.distributed world
(``collective_launch.launch`` targets).

The pipeline's clock (CONTRACT 8.3): rank r's stage is wrapped in :class:`TimedStage`, whose
forward charges ``rows / micro_rows`` ticks to rank r before it computes, and whose output carries
an autograd node that charges the same again when the backward pass goes through it. A receive
completes no earlier than the tick of its send (procgroup). The schedule's length is the largest
tick any rank reaches.
"""

from __future__ import annotations

import array
import collections
import contextvars
import dataclasses
import functools
import gc
import sys
import threading
import types
from fractions import Fraction

import torch
from torch import nn

from ch13lib.cell import (
    MODULE_PREFIX,
    closure_value,
    code_global_names,
    is_cell,
    is_self_check_copy,
    not_defined,
    rank_copies,
)
from ch13lib.collective_cases import SimFailure, run_world, serve_report
from ch13lib.parallel_cases import (
    LOSSES,
    ZERO_DEFAULTS,
    PipeCase,
    Stage,
    TPCase,
    ZeroCase,
    make_batch,
    make_mlp,
    make_stages,
    rank_inputs,
    tp_shard,
)

RANK_API = ("run_real",)  # what a rank of a launched world may run (ch13lib.collective_launch)

# run in the subject on the answer cell: a whole threads world, or one rank of a relayed world
SUBJECT_API = ("observe_pipeline", "observe_tp", "observe_zero", "rank_pipeline", "rank_tp", "rank_zero")


def _one_thread() -> None:
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def _function(cell, name: str, what: str):
    """The cell's ``name``, which must be callable (``what``: what the contract needs)."""
    fn = getattr(cell.module, name, None)
    if not callable(fn):
        raise SimFailure(not_defined(name, getattr(cell, "grade_id", "answer"), f"the contract needs {what}"))
    return fn


def _returned(v):
    """A return value as plain data the verdicts read."""
    if v is None:
        return None
    if isinstance(v, float):
        return {"kind": "float", "value": float(v)}
    if isinstance(v, torch.Tensor):
        return {"kind": "tensor", "value": float(v.detach().reshape(-1)[0]) if v.numel() == 1 else list(v.shape)}
    return {"kind": "other", "type": type(v).__name__}


# ---------------------------------------------------------------------------------------------
# pipeline
# ---------------------------------------------------------------------------------------------
class _BackwardTick(torch.autograd.Function):
    """Identity whose backward charges a stage's backward work to its rank's clock."""

    @staticmethod
    def forward(ctx, out, tag):
        ctx.tag = tag
        return out.view_as(out)

    @staticmethod
    def backward(ctx, grad):
        clock, ticks, first = ctx.tag
        clock(ticks, "B", first)
        return grad, None


class TimedStage(nn.Module):
    """A pipeline stage on the logical clock: forward and backward each cost rows / micro_rows ticks."""

    def __init__(self, inner: nn.Module, clock, micro_rows: int) -> None:
        super().__init__()
        self._inner = inner
        self.in_features, self.out_features = inner.in_features, inner.out_features
        self._clock = clock  # clock(ticks, kind, first micro-batch)
        self._rows = micro_rows
        self._done = 0  # forward micro-batches so far (labels the chart)

    def forward(self, x):
        # rows of in_features values, however x is shaped: a (1, B, d) batch is B rows of work
        rows = x.numel() // max(1, self.in_features)
        ticks = Fraction(rows, self._rows)
        first = self._done
        self._done += max(1, round(ticks))
        self._clock(ticks, "F", first)
        out = self._inner(x)
        if torch.is_grad_enabled() and out.requires_grad:
            out = _BackwardTick.apply(out, (self._clock, ticks, first))
        return out


def _grads(stage: nn.Module) -> list:
    return [p.grad.detach().to("cpu").clone() if p.grad is not None else None for p in stage.parameters()]


def _as_case(case, cls):
    if isinstance(case, cls):
        return case
    return cls(**case)


def observe_pipeline(cell, case: PipeCase, *, fn_name: str = "gpipe_step", guard_s: float = 20.0) -> dict:
    """Run ``gpipe_step`` on the simulated group: each rank's return value and .grad, and the schedule.

    Returns ``{"returns", "grads", "length", "clock", "timeline"}`` (timeline: (rank, start, end,
    "F" or "B", first micro-batch) per stage call)."""
    from ch13lib.procgroup import SimWorld

    _one_thread()
    case = _as_case(case, PipeCase)
    _function(cell, fn_name, f"a function `{fn_name}(stage, batch, target, n_micro, comm, loss_fn)`")
    P = case.stages
    fns = rank_copies(cell, fn_name, P)  # each rank its own module, as a process
    world = SimWorld(P, policy=case.policy, seed=case.schedule_seed, guard_s=guard_s)
    stages = make_stages(case)
    batch, target = make_batch(case)
    returns = [None] * P

    def clock_of(r):
        return lambda ticks, kind, first: world.advance(r, ticks, (kind, first))

    timed = [TimedStage(stages[r], clock_of(r), case.micro_rows) for r in range(P)]

    def body(r, comm):
        returns[r] = fns[r](
            timed[r],
            batch.clone() if r == 0 else None,
            target.clone() if r == P - 1 else None,
            case.n_micro,
            comm,
            LOSSES[case.loss],
        )

    run_world(world, body, case, fn_name, p2p=True)
    return {
        "returns": [_returned(v) for v in returns],
        "grads": [_grads(st) for st in stages],
        "length": float(world.length()),
        "clock": [float(c) for c in world.clock],
        "timeline": [(r, float(a), float(b), str(lab[0]), int(lab[1])) for r, a, b, lab in world.timeline],
    }


# ---------------------------------------------------------------------------------------------
# tensor parallelism
# ---------------------------------------------------------------------------------------------
def observe_tp(cell, case: TPCase, *, fn_name: str = "tp_mlp", device: str = "cpu", guard_s: float = 20.0) -> dict:
    """Run ``tp_mlp`` on the simulated group: each rank's output and every comm call it made."""
    from ch13lib.procgroup import SimWorld

    _one_thread()
    case = _as_case(case, TPCase)
    _function(cell, fn_name, f"a function `{fn_name}(x, w1, b1, w2, b2, comm)`")
    W = case.world_size
    fns = rank_copies(cell, fn_name, W)  # each rank its own module, as a process
    full = make_mlp(case, device)
    args = [tp_shard(full, case, r) for r in range(W)]
    outputs = [None] * W
    world = SimWorld(W, policy=case.policy, seed=case.schedule_seed, guard_s=guard_s)

    def body(r, comm):
        outputs[r] = fns[r](*args[r], comm)

    run_world(world, body, case, fn_name, p2p=True, collectives=True, all_reduce=True)
    return {
        "outputs": [o.detach().to("cpu").clone() if isinstance(o, torch.Tensor) else type(o).__name__ for o in outputs],
        "calls": [[{k: v for k, v in c.items() if k != "rank"} for c in world.log if c["rank"] == r] for r in range(W)],
    }


# ---------------------------------------------------------------------------------------------
# ZeRO-1
# ---------------------------------------------------------------------------------------------
def _students(x) -> bool:
    """Whether the function or class ``x`` was written by the student: in an answer cell (its module
    ``answer_...``), a self-check's copy of one, or the notebook itself (``__main__``); or, whatever
    ``__module__`` it claims, a function compiled from the cell, or a class with one among its
    methods: a ``__module__`` or ``__name__`` the cell sets cannot hide its class attributes,
    closures and globals from the walk."""
    if _students_module(getattr(x, "__module__", None)):
        return True
    if isinstance(x, types.FunctionType):
        funcs = [x]
    elif isinstance(x, type):
        funcs = [
            f
            for v in list(vars(x).values())
            for f in (v, getattr(v, "__func__", None), getattr(v, "fget", None))
            if isinstance(f, types.FunctionType)
        ]
    else:
        return False
    return any(is_cell(f.__code__) or is_self_check_copy(f.__code__.co_filename) for f in funcs)


def _buffer(x) -> bool:
    """Whether ``x`` exposes memory through the buffer protocol (an ``mmap``...)."""
    try:
        memoryview(x).release()
    except (TypeError, ValueError, BufferError):
        return False
    return True


def _students_module(module) -> bool:
    return type(module) is str and (module == "__main__" or module.startswith(MODULE_PREFIX))


_MEMOIZED = type(functools.lru_cache(maxsize=None)(len))  # functools.cache's type too
# Python's text and numbers reached (str, int, float, complex objects) count by their memory past
# this allowance (names, labels, a docstring, hyper-parameters): full moments packed into a str, an
# int's digits or tuples of 8 floats would be held by no element count. Only a case
# with a large N can tell: zero1's last state case and last real case.
PY_SCALARS_ALLOWANCE = 16 * 1024  # bytes
# The modules loaded before any cell (this harness is imported first): the libraries. Kept, so that
# no id is reused; a module the cell made, named "__main__" or given a spec, is none of them.
_MODULES = tuple(sys.modules.values())
_MODULES_BEFORE = frozenset(map(id, _MODULES))


def _held_numel(opt, params: list, comm=None, comm_before: dict | None = None) -> int:
    """What an optimizer object holds between steps, in elements.

    Everything reachable from it is visited once, whatever holds it: its attributes, containers, C
    objects (an ``itertools.repeat``, a ``map``, a mapping proxy, a cell: their referents, as
    ``gc.get_referents`` sees them), a bound method's object, a ``functools.partial``'s arguments, a
    tensor's attributes, ``.grad`` and autograd graph, and, for the classes and functions the
    student wrote, their class attributes, closures, defaults and the globals their code names, the
    cache of a memoized function (a library's too) and the locals of a suspended generator, the object a C method is
    bound to (``[full, full].copy``), what a str, int or float subclass's object carries, and what
    the cell set on ``comm`` (``comm_before``: its attributes before the cell had it; None: none). Library code,
    modules and the rest of ``comm`` are not entered. Every storage counts its elements once,
    whatever its dtype: integer and bool tensors and arrays too (state may not hide in another
    dtype), except index-like ones (every value in [0,
    W·⌈N/W⌉]: a mask over the W·c positions, an index of the own shard) up to W·c + c elements in
    all; ``bytes``, ``bytearray`` and ``array.array`` count their bytes in elements of the
    parameters' size, Python numbers in a container one each past 8 per container (``betas`` is not
    state). Not counted: the parameters and their .grad (the distinct elements they cover: a
    storage they are views of counts the rest, so a flat buffer the parameters view, as FSDP's and
    ``vector_to_parameters``' are, counts only its padding, and that padding up to W·c − N is
    excused too), the .grad of a Parameter of the optimizer's own (its gradient shard,
    as ``shard.grad``: its own elements, not the rest of a storage it is a view of; not the .grad of
    one that shares a model parameter's storage: it is as big as the model), and a few 0-d tensors (step counters,
    running powers of the betas: two per parameter and two more). What no referent leads to is
    looked up too: the value a ``ContextVar`` holds in the rank's context, a ``threading.local``'s
    attributes in its thread, and a module the cell made (state there is held all the same).
    Python's text and numbers (``str``, ``int``, ``float``, ``complex``
    objects) count by their memory past ``PY_SCALARS_ALLOWANCE`` bytes in all."""
    model = {p.untyped_storage().data_ptr() for p in params}
    elsize = params[0].element_size() if params else 4
    # The parameters and their grads are excused the distinct elements they cover in their storages,
    # not the rest of a storage they are views of (full moments behind a model .grad, or beside the
    # parameters in one flat buffer, count). Distinct positions, not numel: views that overlap, or
    # an expanded (stride 0) .grad, cover few elements and excuse only those.
    covers: dict = {}  # (storage, element size) -> [storage positions each tensor covers]

    def cover(t) -> None:
        if t.numel() > 4 * positions + 1024:  # no gradient is that large: it excuses nothing
            return
        try:  # (a sparse or nested tensor has no strides: it excuses nothing)
            at = torch.full(t.shape, t.storage_offset(), dtype=torch.int64)
            for dim, (size, stride) in enumerate(zip(t.shape, t.stride())):
                shape = [1] * t.dim()
                shape[dim] = size
                at = at + torch.arange(size, dtype=torch.int64).reshape(shape) * stride
            key = (t.untyped_storage().data_ptr(), t.element_size())
        except (RuntimeError, TypeError, NotImplementedError):
            return
        covers.setdefault(key, []).append(at.reshape(-1))

    held: dict = {}  # storage (a data pointer, or ("py", id) for Python's own) -> (elements, a lone 0-d)
    index_like: dict = {}  # bool and integer storages whose values are all positions: -> elements
    nbytes_of: dict = {}  # storage -> its bytes (what the parameters cover in it is a share of those)
    world = getattr(comm, "world_size", 1)  # the harness's comm (a test may pass none)
    positions = world * -(-sum(p.numel() for p in params) // world)  # W·c
    for t in list(params) + [p.grad for p in params if p.grad is not None]:
        cover(t)
    counted = {id(p.grad) for p in params if p.grad is not None}
    np = sys.modules.get("numpy")  # arrays exist only if something imported numpy
    Node = torch.autograd.graph.Node

    def storage(ptr, n, nbytes, zero_d, values) -> None:
        """A storage of ``n`` elements and ``nbytes`` bytes; ``values``: its values when it is no
        floating-point one. Index-like ones count their elements; any other at least its bytes in the
        parameters' elements: a complex128 or int64 buffer in a float32 case holds two values an
        element, one of them perhaps a parameter's (a strided view of it), the other a moment's."""
        nbytes_of[ptr] = nbytes
        if values is not None and (values.dtype == torch.bool or bool(((values >= 0) & (values <= positions)).all())):
            index_like[ptr] = n
        else:  # (a storage reached twice, as an array and as a tensor, counts the larger)
            units, before = max(n, nbytes // elsize), held.get(ptr)
            one = zero_d and n == 1  # a 0-d tensor of its own: a step counter or a beta power
            held[ptr] = (units, one) if before is None else (max(units, before[0]), one and before[1])

    visited = set()
    scalar_bytes = 0  # memory of the str, int, float and complex objects reached (PY_SCALARS_ALLOWANCE)
    todo = [opt]
    while todo:  # a stack, not recursion: no depth a cell can nest things to ends the walk
        x = todo.pop()
        if x is None or id(x) in visited:
            continue
        visited.add(id(x))
        if x is comm:  # the harness's: only what the cell set on it, which the cell holds
            before = comm_before if comm_before is not None else getattr(comm, "__dict__", {})
            todo.extend(v for k, v in getattr(comm, "__dict__", {}).items() if k not in before or before[k] is not v)
            continue
        if isinstance(x, types.ModuleType) and id(x) not in _MODULES_BEFORE:
            # a module that was not there when the harness loaded, before any cell: one the cell made
            # (types.ModuleType(), under any name or spec: a namespace of its own) or imported since
            todo.extend(vars(x).values())
            continue
        if type(x) in (str, int, float, complex):
            scalar_bytes += sys.getsizeof(x)
            continue
        if isinstance(x, types.ModuleType) or type(x) is bool:
            continue  # (a subclass's object is walked: its attributes can hold anything)
        if isinstance(x, contextvars.ContextVar):  # its value lives in the context, not in the variable
            todo.append(x.get(None))  # (this is the rank's own thread: the context it set it in)
            continue
        if isinstance(x, threading.local):  # its attributes live with each thread, as gc does not see
            todo.append(getattr(x, "__dict__", None))  # this thread's: the rank's
        if isinstance(x, (list, tuple, set, frozenset, dict, collections.deque)):
            items = list(x.values()) if isinstance(x, dict) else list(x)
            floats = sum(type(v) in (float, complex) or (np is not None and isinstance(v, np.inexact)) for v in items)
            if floats > 8:  # floats kept in Python: one element each
                held[("py", id(x))] = (floats, False)
        if np is not None and isinstance(x, np.ndarray):
            base = x
            while isinstance(base.base, np.ndarray):
                base = base.base
            ptr, flat = base.__array_interface__["data"][0], base.reshape(-1)
            if base.size and base.dtype.kind in "fc":
                storage(ptr, base.size, base.nbytes, base.ndim == 0, None)
            elif base.size and base.dtype.kind in "biu":
                storage(ptr, base.size, base.nbytes, base.ndim == 0, torch.from_numpy(flat.astype(np.int64)))
            elif base.size:  # objects, text, records: every element, and what an object array holds
                held[ptr] = (max(base.size, base.nbytes // elsize), False)
                if base.dtype.kind == "O":
                    todo.extend(flat.tolist())
            todo.append(base.base)  # an array on a bytes object...
        elif isinstance(x, (torch.UntypedStorage, torch.TypedStorage)):  # a storage with no tensor holds elements too
            untyped = x if isinstance(x, torch.UntypedStorage) else x.untyped_storage()
            held[untyped.data_ptr()] = (untyped.nbytes() // elsize, False)
            nbytes_of[untyped.data_ptr()] = untyped.nbytes()
        elif isinstance(x, (bytes, bytearray, array.array, memoryview)) or _buffer(x):
            held[("py", id(x))] = (memoryview(x).nbytes // elsize, False)  # and mmap, any buffer
        elif isinstance(x, torch.Tensor):
            ptr = x.untyped_storage().data_ptr()
            if isinstance(x, nn.Parameter) and x.grad is not None and ptr not in model:
                # its own shard's gradient, as shard.grad: its elements, not the rest of a storage it
                # is a view of (the rest of that buffer is state like any)
                if id(x.grad) not in counted:
                    counted.add(id(x.grad))
                    cover(x.grad)
            if x.numel():
                try:
                    whole = torch.empty(0, dtype=x.dtype, device=x.device).set_(x.untyped_storage())
                    floating = x.is_floating_point() or x.is_complex()
                    nbytes = x.untyped_storage().nbytes()
                    storage(ptr, whole.numel(), nbytes, x.dim() == 0, None if floating else whole.detach().to("cpu"))
                except (RuntimeError, TypeError, NotImplementedError):  # sparse, nested...: all of it counts
                    held[("py", id(x))] = (x.numel(), False)
            todo.extend(getattr(x, "__dict__", {}).values())  # attributes set on a tensor
            todo.extend((x.grad, x.grad_fn))
        elif isinstance(x, Node):  # an autograd graph keeps the tensors it saved
            todo.extend(getattr(x, a, None) for a in dir(x) if a.startswith("_saved_") or a == "variable")
            todo.extend(fn for fn, _ in x.next_functions)
        elif type(x) is _MEMOIZED:  # the cache: referenced by the C object alone (gc: trusted code only),
            todo.extend(gc.get_referents(x))  # whoever wrote the function (its cache holds what it returned)
        elif isinstance(x, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
            frame = getattr(x, "gi_frame", None) or getattr(x, "cr_frame", None) or getattr(x, "ag_frame", None)
            if frame is not None and _students_module(frame.f_globals.get("__name__")):
                todo.append(dict(frame.f_locals))
        elif isinstance(x, types.FunctionType):
            if _students(x):  # where the student's function keeps things: closures, defaults, globals it uses
                todo.append(getattr(x, "__dict__", None))  # and its attributes (f.v = ...)
                todo.extend(closure_value(c) for c in x.__closure__ or ())
                todo.extend((x.__defaults__, x.__kwdefaults__))
                todo.extend(x.__globals__.get(n) for n in sorted(code_global_names(x.__code__)))
        elif isinstance(x, type):
            if _students(x):  # its class attributes
                todo.extend(vars(x).values())
        elif isinstance(x, types.MethodType):
            todo.extend((x.__func__, x.__self__))
        elif isinstance(x, (types.BuiltinFunctionType, types.MethodWrapperType)):
            todo.append(getattr(x, "__self__", None))  # [full, full].copy holds its list
        elif not isinstance(x, types.CodeType):
            # an object, a container, a C object: what it refers to (its __dict__, slots, items,
            # the iterable of an iterator, a partial's arguments, a cell's value...), and its class
            todo.extend(gc.get_referents(x))
            todo.append(type(x))
    own_bytes: dict = {}  # storage -> its distinct bytes the parameters and gradients cover
    for (ptr, size), ats in covers.items():
        own_bytes[ptr] = own_bytes.get(ptr, 0) + torch.cat(ats).unique().numel() * size

    def own(ptr, n) -> int:
        """Of a storage's ``n`` counted elements, the share the parameters and gradients cover."""
        whole = nbytes_of.get(ptr, 0)
        return n * min(own_bytes.get(ptr, 0), whole) // whole if whole else 0

    allowed = positions + -(-positions // world)  # a mask over the W·c positions and an index of c
    extra = sum(n - own(ptr, n) for ptr, n in index_like.items()) - allowed
    scalars, total, beside_params = 2 * len(params) + 2, 0, 0
    for ptr, (n, zero_d) in held.items():
        if zero_d and scalars > 0:
            scalars -= 1
            continue
        total += n - own(ptr, n)
        if ptr in model:
            beside_params += n - own(ptr, n)
    # a flat buffer of W·c that the parameters view holds them and the padding of the last shard
    total -= min(beside_params, positions - sum(p.numel() for p in params))
    return total + max(0, extra) + max(0, scalar_bytes - PY_SCALARS_ALLOWANCE) // elsize


def _zero_rank(cls, case: ZeroCase, r: int, comm, device: str, given: dict | None = None) -> dict:
    """Rank ``r``'s run of the optimizer; ``given``: its inputs from the judge (rank_inputs)."""
    given = given or rank_inputs(case, r)
    # The model's Parameter objects: the judge feeds the gradients and reads the values through
    # these, whatever the optimizer does with the list it is handed. Where their values live is the
    # optimizer's choice (copied in place, p.data rebound as vector_to_parameters does, views into one
    # flat buffer as FSDP's): the held-state walk counts whatever else such a storage holds.
    params = tuple(nn.Parameter(t.to(device).clone()) for t in given["params"])
    kept = [(p.shape, p.dtype, p.device, p.requires_grad) for p in params]
    hyper = {"lr": case.lr, "betas": tuple(case.betas), "eps": case.eps}
    # the contract's defaults are left to the class's own signature: a wrong default shows
    comm_before = dict(getattr(comm, "__dict__", {}))  # what the cell sets on comm counts as held
    opt = cls(list(params), comm) if hyper == ZERO_DEFAULTS else cls(list(params), comm, **hyper)
    steps = []
    for s in range(case.steps):
        for p, g in zip(params, (t.to(device) for t in given["grads"][s])):
            p.grad = g
        opt.step()
        steps.append(torch.cat([p.detach().reshape(-1).to("cpu") for p in params]).clone())
    n = opt.state_numel()
    return {
        "steps": steps,
        "state_numel": n if type(n) is int else f"a {type(n).__name__}",
        "held": _held_numel(opt, list(params), comm, comm_before),
        # the parameters that are no longer what the model made them: another shape, dtype or
        # device, or no longer trainable (a rebound p.data must be a tensor like the one it replaces)
        "moved": [i for i, p in enumerate(params) if (p.shape, p.dtype, p.device, p.requires_grad) != kept[i]],
    }


def observe_zero(
    cell, case: ZeroCase, *, fn_name: str = "ZeroAdam", device: str = "cpu", guard_s: float = 20.0
) -> dict:
    """Run ``ZeroAdam`` for the case's steps on the simulated group: every rank's parameters after each
    step, its ``state_numel()``, the elements its optimizer holds, and every comm call it made."""
    from ch13lib.procgroup import SimWorld

    _one_thread()
    case = _as_case(case, ZeroCase)
    _function(cell, fn_name, f"a class `{fn_name}(params, comm, lr, betas, eps)`")
    W = case.world_size
    classes = rank_copies(cell, fn_name, W)  # each rank its own module, as a process
    seen = [None] * W
    world = SimWorld(W, policy=case.policy, seed=case.schedule_seed, guard_s=guard_s)

    def body(r, comm):
        seen[r] = _zero_rank(classes[r], case, r, comm, device)

    run_world(world, body, case, fn_name, p2p=True, collectives=True, all_reduce=True)
    return {
        "steps": [s["steps"] for s in seen],
        "state_numel": [s["state_numel"] for s in seen],
        "held": [s["held"] for s in seen],
        "moved": [s["moved"] for s in seen],
        "calls": [[{k: v for k, v in c.items() if k != "rank"} for c in world.log if c["rank"] == r] for r in range(W)],
    }


# ---------------------------------------------------------------------------------------------
# one rank of a relayed world (the judge is the broker: ranks share no memory)
# ---------------------------------------------------------------------------------------------
def rank_pipeline(cell, case: PipeCase, rank: int, *, fn_name: str = "gpipe_step", inputs: dict | None = None):
    """Rank ``rank`` (stage ``rank``) of ``case`` in a world whose broker is the judge. A talking
    harness (kit/subject.py); the stage's clock charges go to the broker as messages, which keeps
    the schedule. ``inputs``: this rank's values as ``parallel_cases.rank_inputs`` gives them (the
    judge's hidden values); without them, the case's own. Returns ``{"returned", "grads"}`` as
    :func:`observe_pipeline` reports them per rank."""
    _one_thread()
    case = _as_case(case, PipeCase)
    fn = _function(cell, fn_name, f"a function `{fn_name}(stage, batch, target, n_micro, comm, loss_fn)`")
    P = case.stages
    given = inputs if type(inputs) is dict else rank_inputs(case, rank)
    stage = Stage(case.widths[rank], case.widths[rank + 1], rank == P - 1)
    with torch.no_grad():
        stage.linear.weight.copy_(given["weight"])
        stage.linear.bias.copy_(given["bias"])
    if given["grads"] is not None:
        for p, g in zip(stage.parameters(), given["grads"]):
            p.grad = g.clone()
    batch, target = given["batch"], given["target"]

    def body(comm):
        timed = TimedStage(stage, comm._advance, case.micro_rows)
        returned = fn(
            timed,
            batch.clone() if rank == 0 else None,
            target.clone() if rank == P - 1 else None,
            case.n_micro,
            comm,
            LOSSES[case.loss],
        )
        return {"returned": _returned(returned), "grads": _grads(stage)}

    return (yield from serve_report(body, rank, P))


def rank_tp(cell, case: TPCase, rank: int, *, fn_name: str = "tp_mlp", device: str = "cpu", inputs: dict | None = None):
    """Rank ``rank`` of ``case`` in a world whose broker is the judge (``inputs`` as for
    :func:`rank_pipeline`): ``{"output": y or its type's name}``."""
    _one_thread()
    case = _as_case(case, TPCase)
    fn = _function(cell, fn_name, f"a function `{fn_name}(x, w1, b1, w2, b2, comm)`")
    given = inputs if type(inputs) is dict else rank_inputs(case, rank)
    args = tuple(t.to(device) for t in given["args"])

    def body(comm):
        out = fn(*args, comm)
        return {"output": out.detach().to("cpu").clone() if isinstance(out, torch.Tensor) else type(out).__name__}

    return (yield from serve_report(body, rank, case.world_size))


def rank_zero(
    cell, case: ZeroCase, rank: int, *, fn_name: str = "ZeroAdam", device: str = "cpu", inputs: dict | None = None
):
    """Rank ``rank`` of ``case`` in a world whose broker is the judge (``inputs`` as for
    :func:`rank_pipeline`): ``{"steps", "state_numel", "held", "moved"}`` as :func:`observe_zero`
    reports them per rank."""
    _one_thread()
    case = _as_case(case, ZeroCase)
    cls = _function(cell, fn_name, f"a class `{fn_name}(params, comm, lr, betas, eps)`")
    given = inputs if type(inputs) is dict else None

    def body(comm):
        return _zero_rank(cls, case, rank, comm, device, given)

    return (yield from serve_report(body, rank, case.world_size))


# ---------------------------------------------------------------------------------------------
# the same runs on a real torch.distributed world (collective_launch.launch targets)
# ---------------------------------------------------------------------------------------------
KINDS = {"pipeline": (PipeCase, "stages"), "tp": (TPCase, "world_size"), "zero": (ZeroCase, "world_size")}


def _tolist(t):
    return None if t is None else t.detach().to("cpu", torch.float64).reshape(-1).tolist()


def _real_case(kind: str, fn, case, rank: int, comm, device: str) -> dict:
    if kind == "pipeline":
        stages = make_stages(case, device=device)
        batch, target = make_batch(case, device)
        P = case.stages
        ret = fn(
            stages[rank],
            batch if rank == 0 else None,
            target if rank == P - 1 else None,
            case.n_micro,
            comm,
            LOSSES[case.loss],
        )
        return {"returned": _returned(ret), "grads": [_tolist(g) for g in _grads(stages[rank])]}
    if kind == "tp":
        full = make_mlp(case, device)
        out = fn(*tp_shard(full, case, rank), comm)
        if not isinstance(out, torch.Tensor):
            return {"output": type(out).__name__, "calls": comm.log}
        return {
            "output": _tolist(out),
            "shape": list(out.shape),
            "dtype": str(out.dtype).replace("torch.", ""),
            "calls": comm.log,
        }
    seen = _zero_rank(fn, case, rank, comm, device)
    return {
        "steps": [_tolist(s) for s in seen["steps"]],
        "state_numel": seen["state_numel"],
        "held": seen["held"],
        "moved": seen["moved"],
        "calls": comm.log,
    }


def run_real(payload: dict) -> dict:
    """One rank of a real world: run the answer on each case (``payload["kind"]``: pipeline, tp, zero)
    in a sub-group of the case's size; stop at the first error (the other ranks then fail on the
    process group's timeout)."""
    import torch.distributed as dist

    from ch13lib.collective_launch import DistComm, load_source, own_traceback

    rank = dist.get_rank()
    device = payload.get("device", "cpu")
    kind = payload["kind"]
    cls, size_field = KINDS[kind]
    module = load_source(payload["source"], payload["name"])
    fn = getattr(module, payload["function"])
    cases = [cls(**c) for c in payload["cases"]]
    groups = {w: dist.new_group(list(range(w))) for w in sorted({getattr(c, size_field) for c in cases})}
    torch.set_num_threads(1)
    results = []
    for case in cases:
        w = getattr(case, size_field)
        if rank >= w:
            results.append(None)
            continue
        comm = DistComm(groups[w], list(range(w)), device)
        try:
            seen = _real_case(kind, fn, case, rank, comm, device)
            if device != "cpu":
                torch.cuda.synchronize()
        except BaseException as e:  # noqa: BLE001 - the student's error, reported per case
            results.append({"error": own_traceback(e)})
            break
        results.append(seen)
    return {"cases": results}


def case_dict(case) -> dict:
    """A case as the JSON payload of a real world carries it."""
    return dataclasses.asdict(case)
