"""The subject: the only process that runs a student's answer cell while it is graded.

    python -m kit.subject GRADE_ID ANSWER_FILE [HARNESS_MODULE ...]

Started by the judge (graders/__main__.py, through kit/judge.py) inside kit.sandbox. It holds no
key, no test, no hidden input or answer, and writes no verdict: it loads the cell, runs what the
judge asks (read a name, call a function, run a public harness of ch13lib on the cell) and sends
back plain data over the channel (kit/wire.py). The judge decides.

Before the cell first runs it imports the harness modules, notes every attribute of them (and of
the libraries graders rely on), and installs the audit hook of kit/audit.py. After each request it
reports what the cell refused to be denied (audit events) and which of those attributes it
replaced; the judge fails that test and starts a fresh subject for the next.

The channel: requests arrive on a descriptor moved off stdin, answers leave on one moved off
stdout; the cell's prints go to stderr (the judge's log of the job). Each request carries a nonce
that the answer echoes, and answers come strictly in order, so a frame the cell writes itself is
noticed (docs/design.md, "Judge and subject").
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import random
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from kit import audit, source_ch13lib
from kit import harness as interface
from kit.audit import classify, library_roots

if TYPE_CHECKING:  # the subject imports the wire when it starts serving (main)
    from kit import wire

# The cell's naming, loading and tracebacks: ch13lib/cell.py, imported from where the judge put it
# on PYTHONPATH (kit/judge.py), else from source/ (a test that imports this module in-process).
if importlib.util.find_spec("ch13lib") is None:
    source_ch13lib()
from ch13lib.cell import MODULE_PREFIX, compile_cell, filename, module_name, new_module, text, traceback_text  # noqa: E402

# Libraries whose attributes a grader relies on: replacing one from the cell is tampering.
WATCHED_MODULES = (
    "math",
    "cmath",
    "operator",
    "functools",
    "itertools",
    "json",
    "threading",
    "time",
    "random",
    "queue",
    "copy",
    "collections",
    "statistics",
    "numpy",
    "torch",
    "torch.distributed",
    "ray",
    "numba",
    "numba.cuda",
    "signal",
    "os",
    "sys",
    "builtins",
)


class Cell:
    """The student's answer cell, loadable as a fresh module as often as a harness needs."""

    def __init__(self, grade_id: str, source: str) -> None:
        self.grade_id = grade_id
        self.source = source
        self.filename = filename(grade_id)
        self._count = 0
        self._module: types.ModuleType | None = None
        self._code = compile_cell(source, self.filename)  # once: schedulers load it thousands of times

    def load(self) -> types.ModuleType:
        """Execute the cell in a new module (registered in sys.modules so pickling works)."""
        self._count += 1
        return new_module(self._code, module_name(self.grade_id, self._count))

    @property
    def module(self) -> types.ModuleType:
        """One shared module for requests that need no fresh state."""
        if self._module is None:
            self._module = self.load()
        return self._module


def raised(exc: BaseException, cell: Cell | None) -> dict:
    t = type(exc)
    module = str(type.__dict__["__module__"].__get__(t) or "") if isinstance(t, type) else ""
    return {
        "type": str(t.__name__)[:100],
        "module": module[:100],
        "builtins": builtin_kinds(t),
        "message": text(exc),
        "traceback": traceback_text(exc, cell.filename) if cell else "",
    }


def builtin_kinds(t: type) -> list[str]:
    """The built-in exception classes ``t`` is a subclass of, by their real MRO (not a metaclass's):
    what the judge asks of an exception ("a ValueError?"), since a class of the cell's can take any
    name (``class ValueError(RuntimeError)``)."""
    import builtins

    mro = type.__dict__["__mro__"].__get__(t) if isinstance(t, type) else ()
    return [k.__name__ for k in mro if getattr(builtins, k.__name__, None) is k][:40]


# ---------------------------------------------------------------- the tamper guard


@functools.cache
def _roots():
    return library_roots()


def _student_code(code) -> bool:
    return classify(code.co_filename, _roots())[0] == "student"


def _from_answer(value, depth: int = 0) -> bool:
    """Made by the student's cell (a function, class or instance defined there)? Judged by where
    the code comes from (the file it was compiled from, as the audit hook judges frames: the cell,
    a string, a file the cell wrote), never by a name the class declares, and never by running the
    student's code (no getattr on their objects: a __getattr__ of theirs could do anything)."""
    from inspect import getattr_static

    if depth > 3:
        return False
    if isinstance(value, types.FunctionType):
        return _student_code(value.__code__)
    inner = None
    if isinstance(value, (types.MethodType, staticmethod, classmethod)):
        inner = value.__func__
    elif isinstance(value, functools.partial):
        inner = value.func
    elif isinstance(value, property):
        inner = value.fget
    if inner is not None:
        return _from_answer(inner, depth + 1)
    for t in ((value,) if isinstance(value, type) else ()) + (type(value),):
        if str(getattr_static(t, "__module__", "") or "").startswith(MODULE_PREFIX):
            return True
        for k in t.__mro__[:-1]:  # a method the cell wrote, whatever __module__ the class claims
            if any(_from_answer(v, depth + 1) for v in list(vars(k).values()) if _is_code(v)):
                return True
        if _impostor(t):
            return True
    return False


def _is_code(v) -> bool:
    return isinstance(v, (types.FunctionType, types.MethodType, staticmethod, classmethod, property, functools.partial))


def _impostor(t: type) -> bool:
    """A class that claims to live in a watched library but is not found there under its name
    (``class Serial: __module__ = "threading"``). Not asked of the harness's own modules: their
    public classes may not be replaced by anything, and their private state is rebound by the
    harness itself (Ray's actor classes keep the original's module and name, and are not found)."""
    from inspect import getattr_static

    module = str(getattr_static(t, "__module__", "") or "")
    if module not in WATCHED_MODULES:
        return False
    found = sys.modules.get(module)
    try:
        for part in str(t.__qualname__).split("."):
            found = getattr_static(found, part)
    except AttributeError:
        return "<locals>" not in str(t.__qualname__)
    return found is not t and "<locals>" not in str(t.__qualname__)


def _plain(key: str) -> bool:
    return not (key.startswith("__") and key.endswith("__"))


def _code_of(v):
    """What a harness function runs: rebinding ``f.__code__`` keeps the function object."""
    if isinstance(v, types.FunctionType):
        return (v.__code__, v.__defaults__, v.__kwdefaults__)
    return None


# The harness's packages: the public one (ch13lib) and the kit's grading side (kit/harnesses/).
HARNESS_PACKAGES = ("ch13lib", "kit.harnesses")
# Whose RANK_API a rank of a launched world may run (Trusted.ranks): the harness's, and the GPU runner's.
RANK_PACKAGES = HARNESS_PACKAGES + ("gpu",)


def snapshot(harness: list[str]) -> dict:
    """label -> (namespace, its entries now): the watched libraries, and every module of the
    harness's packages with its classes (``type(comm).send = ...`` is a monkeypatch too)."""
    snap = {}
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name in WATCHED_MODULES or name.startswith(("ch13lib", "kit.")) or name in harness):
            continue
        d = vars(mod)
        strict = name.startswith(HARNESS_PACKAGES)
        snap[name] = (d, {k: v for k, v in d.items() if _plain(k)}, _codes(d) if strict else {})
        if strict:
            for k, v in list(d.items()):
                if isinstance(v, type) and v.__module__ == name:
                    snap[f"{name}.{k}"] = (v, {a: b for a, b in vars(v).items() if _plain(a)}, _codes(vars(v)))
    return snap


def _codes(d) -> dict:
    return {k: _code_of(v) for k, v in list(d.items()) if isinstance(v, types.FunctionType)}


def tampered(snap: dict) -> list[str]:
    """Attributes of the harness and the watched libraries that now hold something of the cell's,
    and functions and classes of the harness's packages that were replaced by anything."""
    out = []
    for label, (ns, before, codes) in snap.items():
        d = vars(ns) if isinstance(ns, type) else ns
        strict = label.startswith(HARNESS_PACKAGES)
        own = label.startswith("kit.")  # the subject's own machinery: any change at all is tampering
        for key, old in before.items():
            new = d.get(key, old)
            replaced_code = strict and not key.startswith("_") and isinstance(old, (types.FunctionType, type))
            handed = type(old) is Trusted  # what the subject handed a harness: its guards
            if new is not old and (own or replaced_code or handed or _from_answer(new)):
                out.append(f"{label}.{key}")
        for key in [k for k in list(d) if k not in before and _plain(k)]:
            if _from_answer(d[key]):
                out.append(f"{label}.{key}")
        for key, was in codes.items():  # f.__code__ = ... keeps the function object: compare what it runs
            now = _code_of(d.get(key))
            if now is not None and any(a is not b for a, b in zip(now, was)):
                out.append(f"{label}.{key}.__code__")
    return sorted(set(out))[:10]


def _guard_signal_handlers() -> None:
    """A signal handler is called with the frame it interrupted, with no audit event: from the
    subject's main loop that frame leads to the channel. Only library code may install handlers
    (Ray and torch do); the cell gets a PermissionError. The real function is held in this closure
    only, and replaced in both ``signal`` and ``_signal`` (reading either finds the guard)."""
    import _signal
    import signal

    real, roots, sort_of = _signal.signal, library_roots(), classify

    def guarded(signalnum, handler):
        plain = handler in (signal.SIG_DFL, signal.SIG_IGN, None) or type(handler) is int
        func = handler.__func__ if type(handler) is types.MethodType else handler
        library = type(func) is types.FunctionType and sort_of(func.__code__.co_filename, roots)[0] != "student"
        if not (plain or library):
            raise PermissionError("the grading sandbox refused `signal.signal`: no exercise needs a signal handler")
        return real(signalnum, handler)

    _signal.signal = guarded
    signal.signal = guarded


# ---------------------------------------------------------------- the guards, handed to the harness


class Trusted(NamedTuple):
    """What the subject hands each harness's ``subject_setup(trusted)`` before any student code
    runs: ch13lib imports nothing of kit, so the processes a harness starts to run the cell (a
    rank of a real world, a fresh interpreter) get the subject's guards from here or run nothing.
    A named tuple: nothing changes it in place (``object.__setattr__`` writes a frozen dataclass
    with no audit event), and rebinding an attribute that holds one is tampering (:func:`tampered`).

    ``guard(harness)``: install in the calling process the guards the subject installs in itself
    (:func:`guard`); returns the function that reports ``{"refused": [...], "tampered": [...]}``.
    ``child``: the command line of a fresh interpreter that runs one harness function on the cell
    under those guards (:func:`child`); the caller appends the request, as JSON, and starts it with
    ``env``: the subject's environment as it was before any student code ran (the cell can change
    ``os.environ``, and a ``PYTHONPATH`` of its choosing would import its own ``kit`` or
    ``sitecustomize`` before any guard). ``-P`` keeps the working folder, which the cell can write,
    off the child's ``sys.path`` for the same reason.
    ``ranks``: what a rank of a world the harness launches may run, ``(("module:function",
    function), ...)``: the ``RANK_API`` entries of the subject's harness modules (of
    ``RANK_PACKAGES``), checked as they were imported. A guarded rank runs one of these, looked up
    by its exact name, and nothing else (ch13lib.collective_launch ``_worker``): the registry
    travels with ``guard``, through the frames of the zygote and the rank, so ch13lib imports
    nothing of kit and the cell, which names the target in the payload, cannot widen it."""

    guard: Callable[[list[str]], Callable[[], dict]]
    child: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    ranks: tuple[tuple[str, Callable], ...] = ()


# The guarded child's command (Trusted.child): as the subject's own entry (kit/subjects.py), ``-c``
# keeps this module out of ``__main__``.
CHILD_ENTRY = "import sys, kit.subject; kit.subject.child(sys.argv[1:])"


def guard(harness: list[str]) -> Callable[[], dict]:
    """Install the subject's guards in this process, before the cell runs here: the signal
    guard, the snapshot of the harness and the watched libraries, the sealed memory, the audit hook;
    then kit leaves sys.modules (reaching it again is an import the hook refuses) and ``__main__``
    is emptied (a ``-c`` entry leaves ``kit`` in its globals, and ``import __main__`` raises no event).
    Returns the function that reports what the cell was refused and what it replaced. The caller
    holds it in a local variable: the cell can rebind module attributes, not a running frame's
    variables."""
    _guard_signal_handlers()  # a handler would be handed the frame it interrupts
    snap = snapshot(list(harness))
    audit.seal_memory()  # again where a fork inherited it; an exec'd interpreter starts unsealed
    refused, check = audit.install(), tampered
    for name in [m for m in sys.modules if m == "kit" or m.startswith("kit.")]:
        del sys.modules[name]
    entry = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    if entry is not None:
        vars(entry).clear()

    def report() -> dict:
        return {"refused": refused(), "tampered": check(snap)}

    return report


def trusted(ranks: dict | None = None) -> Trusted:
    """The subject's handover, for this job: the guarded child carries the job's tag on its command
    line (a sealed process's environment is root's to read; kit.jobs finds it by the tag).
    ``ranks``: the harness's ``RANK_API`` entries, ``{"module:function": function}``."""
    tag = f"CH13_JOB={os.environ.get('CH13_JOB', '')}"
    return Trusted(
        guard=guard,
        child=(sys.executable, "-P", "-c", CHILD_ENTRY, tag),
        env=tuple(os.environ.items()),
        ranks=tuple(sorted((ranks or {}).items())),
    )


def rank_entries(modules: list[types.ModuleType]) -> dict[str, Callable]:
    """``{"module:function": function}``: the ``RANK_API`` entries of the harness modules of
    ``RANK_PACKAGES`` (each checked by :func:`kit.harness.check` already)."""
    out = {}
    for module in modules:
        name = module.__name__
        if any(name == p or name.startswith(p + ".") for p in RANK_PACKAGES):
            out.update(interface.entry_points(module, "RANK_API"))
    return out


def child(argv: list[str]) -> None:
    """A fresh interpreter that runs one harness function on the cell under the subject's guards
    (``Trusted.child``; kit.harnesses.mapreduce_probe runs ``partition`` in one per hash seed).

    ``argv``: the job's tag, then the request ``{"grade_id", "call": "MODULE:FUNCTION", "args"}``;
    the cell's source arrives on stdin. MODULE must be a module of the harness's packages
    (``HARNESS_PACKAGES``: ch13lib or kit.harnesses), and FUNCTION must be listed in its
    ``CHILD_API``; it is called as ``FUNCTION(cell, *args)`` with a :class:`Cell`. One JSON line
    goes to stdout: ``{"ok": value}`` or ``{"error": text}``, with ``"refused"`` and ``"tampered"``.
    The cell's prints go to stderr."""
    out = os.fdopen(_move_fd(1), "w", encoding="utf-8")  # the cell shares descriptor 1 no more
    os.dup2(2, 1)
    request = json.loads(argv[1])
    source = sys.stdin.read()
    sys.stdin = open(os.devnull)  # noqa: SIM115 - input() gets EOF
    module, _, func = str(request.get("call", "")).partition(":")
    if not any(module == p or module.startswith(p + ".") for p in HARNESS_PACKAGES):
        raise PermissionError(f"not a harness module ({', '.join(HARNESS_PACKAGES)}): {request.get('call')!r}")
    imported = importlib.import_module(module)  # before the snapshot: the guards watch it
    interface.check(imported)
    target = interface.entry_points(imported, "CHILD_API").get(f"{module}:{func}")
    if target is None:
        raise PermissionError(f"not in {module}.CHILD_API: {func!r}")
    cell, args = Cell(request["grade_id"], source), list(request.get("args") or [])
    report = guard([module])  # held in this frame's locals: the cell runs inside target(...)
    try:
        result = {"ok": target(cell, *args)}
    except BaseException as e:  # noqa: BLE001 - the cell's exception, as text
        result = {"error": f"{type(e).__name__}: {text(e)}"}
    result.update(report())
    out.write(json.dumps(result) + "\n")
    out.flush()
    sys.stdout.flush()
    os._exit(0)  # threads the cell left running cannot keep the child alive


# ---------------------------------------------------------------- requests


def _resolve(name: str, table: dict):
    if name not in table:
        raise LookupError(f"the judge asked for an unknown harness function {name!r}")
    return table[name]


def _attribute(cell: Cell, names: list[str]) -> dict:
    from inspect import getattr_static

    from kit import wire

    out = {}
    module = cell.module
    for name in names:
        try:
            value = getattr_static(module, name)
        except AttributeError:
            out[name] = {"defined": False}
            continue
        entry = {"defined": True, "callable": callable(value), "type": str(type(value).__name__)}
        try:
            wire.to_plain(value)  # sendable? (the answer frame encodes it again)
            entry["value"] = value
        except wire.WireError as e:
            entry["unsendable"] = str(e)
        out[name] = entry
    return out


def handle(request: wire.Request, cell: Cell, table: dict):
    op = request.get("op")
    args, kwargs = request.get("args") or [], request.get("kwargs") or {}
    if op == "load":
        return sorted(k for k in vars(cell.module) if not k.startswith("_"))
    if op == "get":
        return _attribute(cell, list(args))
    if op == "call":
        fn = getattr(cell.module, request["name"])
        return fn(*args, **kwargs)
    if op == "run":
        return _resolve(request["name"], table)(cell, *args, **kwargs)
    raise LookupError(f"unknown request {op!r}")


def _step(conversation, value) -> tuple[bool, object]:
    """Advance a talking harness: (False, what it sends next) or (True, its return value)."""
    try:
        return False, conversation.send(value)
    except StopIteration as e:
        return True, e.value


def _end(conversation) -> None:
    """Close a talking harness the judge left (its ``finally`` ends the rank it drives)."""
    if conversation is not None:
        try:
            conversation.close()
        except BaseException:  # noqa: BLE001 - the cell's code may raise as it unwinds
            pass
    return None


def _move_fd(fd: int) -> int:
    """Dup ``fd`` to a random high descriptor (close-on-exec) and close the original."""
    for _ in range(100):
        target = random.SystemRandom().randrange(300, 1000)
        try:
            os.fstat(target)
            continue
        except OSError:
            pass
        os.dup2(fd, target, inheritable=False)
        return target
    return os.dup(fd)


def main(argv: list[str]) -> int:
    grade_id, answer_file, harness = argv[0], argv[1], argv[2:]
    from kit import wire

    requests_fd, answers_fd = _move_fd(0), _move_fd(1)
    # The seal's key (kit.wire.seal), first on the pipe and read before any student code: the cell
    # shares these descriptors and can read, steal or write frames on them, but it can neither write
    # an answer the judge accepts nor change a request. Held in this frame's locals only.
    key = wire.read_exact(requests_fd, wire.KEY_SIZE)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # the cell's prints go to the job's log, never onto the channel
    os.close(devnull)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - input() gets EOF

    table, modules = {}, []
    for name in harness:  # the harnesses, imported and checked before any student code
        module = importlib.import_module(name)
        interface.check(module)
        table.update(interface.entry_points(module, "SUBJECT_API"))
        modules.append(module)
    # Before any student code, and before a harness forks anything (a zygote inherits it): raw
    # memory (/proc/self/mem, /proc/PID/mem, ptrace) is then the kernel's to refuse.
    audit.seal_memory()
    # A harness's own preparation, while no student code has run (a zygote), with the guards handed
    # over: ch13lib imports nothing of kit, and what it starts to run the cell is guarded with these.
    handover = trusted(rank_entries(modules))
    for name in harness:
        setup = interface.setup(sys.modules[name])
        if setup is not None:
            setup(handover)
    del handover
    with open(answer_file, encoding="utf-8") as f:
        source = f.read()
    try:
        cell = Cell(grade_id, source)
        compile_error = None
    except SyntaxError as e:
        cell, compile_error = None, f"line {e.lineno}: {e.msg}"
    # What the loop below uses is held here, in locals: the cell can rebind a module's attributes
    # (no audit event covers that) but not this frame's variables. The guards then take the kit's
    # modules out of sys.modules, so `from kit import wire` is a fresh, audited import, which the
    # hook refuses, and empty `__main__` (a `-c` entry leaves `kit` in its globals).
    read_frame, encode, write, answer_for = wire.read_frame, wire.encode, os.write, handle
    seal, unsealed = wire.seal, wire.Unsealed
    step, end, generator, talking = _step, _end, types.GeneratorType, None
    describe, wire_error, as_text = raised, wire.WireError, text
    report = guard(harness)

    while True:
        try:
            request = read_frame(requests_fd, from_subject=False, key=key)
        except unsealed:  # the cell wrote on (or took over) the request pipe: say so, sealed
            write(answers_fd, seal(key, encode({"forged": True})))
            continue
        except (EOFError, OSError):
            return 0
        rid, nonce, op = request.get("id"), request.get("nonce"), request.get("op")
        if op == "exit":
            return 0
        answer = {"id": rid, "nonce": nonce}
        try:
            if op == "resume":  # the judge's answer to what a talking harness sent
                if talking is None:
                    raise LookupError("no conversation to resume")
                done, value = step(talking, (request.get("args") or [None])[0])
            else:
                talking = end(talking)
                if cell is None:
                    raise SyntaxError(compile_error)
                value, done = answer_for(request, cell, table), True
                if op == "run" and type(value) is generator:  # a harness that talks back (Subject.converse)
                    talking = value
                    done, value = step(talking, None)
            if done:
                talking, answer["ok"] = None, value
            else:
                answer["yield"] = value
        except BaseException as e:  # noqa: BLE001 - the cell's exception, sent as plain data
            talking = end(talking)
            answer["raised"] = describe(e, cell)
        if "yield" not in answer:  # a conversation's steps skip these; its last answer carries them
            flags = report()
            answer["refused"], answer["tampered"] = flags["refused"], flags["tampered"]
        try:
            frame = encode(answer)
        except BaseException as e:  # noqa: BLE001 - a value that is not plain data
            talking = end(talking)
            answer.pop("ok", None)
            answer.pop("yield", None)
            answer["raised"] = {
                "type": "WireError",
                "module": "kit.wire",
                "traceback": "",
                "message": as_text(e)
                if isinstance(e, wire_error)
                else f"the value could not be sent back: {type(e).__name__}",
            }
            frame = encode(answer)
        view = memoryview(seal(key, frame))
        while view:
            view = view[write(answers_fd, view) :]


def run(argv: list[str]) -> None:
    """The subject's entry point (``python -c``, so that this module is not ``__main__``, which
    the cell could reach through sys.modules). ``argv[0]`` is the job's tag, ``CH13_JOB=<token>``:
    the subject is not dumpable, so its environment is root's to read, and kit.jobs finds it (and
    the processes it forks) by its command line instead."""
    sys.stdout.flush()
    code = main(argv[1:])
    sys.stdout.flush()
    os._exit(code)  # threads the cell left running cannot keep the subject alive


if __name__ == "__main__":
    sys.stdout.flush()
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)  # threads the cell left running cannot keep the subject alive
