"""A student's answer cell: the one home of how the kit names it, loads it and reports on it.

Both sides import this module: the judge (graders/, kit/) and the side that runs the cell (the
subject, ch13lib's harnesses, a launched world's ranks, a student's notebook). ch13lib ships to
students beside the notebooks, so this module imports nothing of kit or graders.

* Naming: an answer cell is compiled from the file name ``<answer cell GRADE_ID>`` (:func:`filename`)
  and runs in modules named ``answer_...`` (:data:`MODULE_PREFIX`). :func:`is_cell` tells whether a
  file name, code object, function, frame or traceback entry comes from an answer cell. It only
  decides which frames a student's traceback shows: what the subject's audit hook counts as the
  student's code is wider (anything compiled from a file that is neither a library's nor the
  harness's: kit/audit.py, ``classify``), and is decided there alone.
* Loading: :func:`compile_cell` (once: tracebacks quote the cell's lines through linecache) and
  :func:`new_module` (a fresh module each time, registered in sys.modules so pickling works);
  :func:`load` does both. Only pseudo file names (``<...>``) are compiled or run here, so code
  loaded through this module is always the student's to the audit hook, whoever calls it.
* Ranks: :func:`rank_copies` gives every rank of a simulated world (threads) its own copy of the
  cell's function or class, from a fresh module each, so ranks share no module state, as the
  processes of a real world share none; :func:`cell_source` finds a notebook object's cell.
* Reporting: :func:`traceback_text` (an exception's traceback cut to the cell's frames) and
  :func:`text` (a ``str()`` that cannot raise or lie).
* The contract: :func:`missing` (the required names a cell does not define) and
  :func:`not_defined` (the one message that says so).
* Grading: :func:`sandboxed` (whether this process descends from the grading sandbox) and
  :func:`unguarded` (the one message of a process that must not run the cell there, having no
  guard handed over: the subject hands its guards to the harness, ``subject_setup(trusted)``).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import linecache
import sys
import traceback
import types

from ch13lib.lang import Both, Messages

# What a student reads about the cell itself (ch13lib/lang.py).
M = Messages(
    not_defined=("`{name}` 在 {cell} 单元中没有定义", "`{name}` is not defined in the {cell} cell"),
    not_defined_needs=(
        "`{name}` 在 {cell} 单元中没有定义 (合约要求 {needs})",
        "`{name}` is not defined in the {cell} cell (the contract needs {needs})",
    ),
    expected_got=("应为 {want}, 得到 {got}", "expected {want}, got {got}"),
    got_hidden=(
        "得到 {got} (这个用例的输入是隐藏的, 它期望的值也是)",
        "got {got} (this case's inputs are hidden, and so is the value it expects)",
    ),
    unguarded=(
        "拒绝运行答案单元: 这个进程在评分沙箱中, 却没有得到评分进程交给它的防护 (审计钩子与篡改检查)",
        "refused to run the answer cell: this process is in the grading sandbox but was handed no guard by "
        "the grading process (the audit hook and the tamper check)",
    ),
)

PREFIX = "<answer cell"  # an answer cell's file name: f"{PREFIX} {grade_id}>"
SELF_CHECK_PREFIX = "<your cell"  # a self-check's copy of the cell: f"{SELF_CHECK_PREFIX}>" (self_check_filename)
MODULE_PREFIX = "answer_"  # the modules an answer cell runs in: f"{MODULE_PREFIX}{grade_id}..."
MESSAGE_CAP = 4000  # characters of an exception's message sent back
_ABSENT = object()


def sandboxed() -> bool:
    """Whether this process descends from kit.sandbox: no_new_privs, which it sets, is inherited by
    every child and cannot be cleared (a student's cell cannot make a process look unsandboxed)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return any(line.split() == ["NoNewPrivs:", "1"] for line in f)
    except OSError:
        return True  # unknown: the strict side


def unguarded() -> str:
    """What a process says that is to run the cell in the grading sandbox with no guard handed over."""
    return M("unguarded")


def filename(grade_id: str) -> str:
    """The file name the answer cell ``grade_id`` is compiled from (what its tracebacks show)."""
    return f"{PREFIX} {grade_id}>"


def self_check_filename(scenario: str = "") -> str:
    """The file name a self-check compiles the student's cell from: ``<your cell>``, or
    ``<your cell SCENARIO>`` for one scenario's copy (what the student's tracebacks show)."""
    return f"{SELF_CHECK_PREFIX} {scenario}>" if scenario else f"{SELF_CHECK_PREFIX}>"


def is_self_check_copy(filename) -> bool:
    """Whether ``filename`` is a self-check's copy of the cell (:func:`self_check_filename`)."""
    return type(filename) is str and filename.startswith(SELF_CHECK_PREFIX)


def module_name(grade_id: str, suffix: object = "") -> str:
    """The name of a module the cell runs in: ``answer_<grade_id>`` or ``answer_<grade_id>_<suffix>``."""
    return f"{MODULE_PREFIX}{grade_id}" + (f"_{suffix}" if suffix != "" else "")


def is_cell(where) -> bool:
    """Whether ``where`` (a file name, code object, function, frame or traceback entry) comes from
    an answer cell."""
    name = where
    if isinstance(where, types.FunctionType):
        where = where.__code__
    if isinstance(where, types.FrameType):
        where = where.f_code
    if isinstance(where, types.CodeType):
        name = where.co_filename
    elif isinstance(where, traceback.FrameSummary):
        name = where.filename
    return type(name) is str and name.startswith(PREFIX)


def _pseudo(name) -> bool:
    """A file name no real file has (``<answer cell counter>``, ``<your cell>``), and not one of the
    interpreter's frozen modules: the audit hook counts code compiled from it as the student's."""
    return type(name) is str and name.startswith("<") and not name.startswith("<frozen")


def compile_cell(source: str, name: str) -> types.CodeType:
    """The cell's code, compiled from the pseudo file ``name`` (``filename(grade_id)``, or a
    self-check's ``<your cell>``), its lines cached so that tracebacks quote them."""
    if not _pseudo(name):
        raise ValueError(f"not a cell's file name: {name!r} (a pseudo name such as {filename('counter')!r})")
    code = compile(source, name, "exec")
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return code


def new_module(
    code: types.CodeType, name: str, *, register: bool = True, _module=types.ModuleType, _modules=sys.modules
) -> types.ModuleType:
    """Execute the cell's ``code`` (from :func:`compile_cell`) in a new module called ``name``,
    registered in sys.modules (so that its classes pickle) unless ``register`` is false. What it
    runs with is bound when this module is imported: rebinding this module's globals changes
    nothing here."""
    if type(code) is not types.CodeType or not _pseudo(code.co_filename):
        raise ValueError("not a cell's code: compile it with compile_cell")
    module = _module(name)
    module.__file__ = code.co_filename
    if register:
        _modules[name] = module
    exec(code, module.__dict__)
    return module


def load(source: str, grade_id: str, suffix: object = "", *, register: bool = True) -> types.ModuleType:
    """The answer cell ``grade_id`` executed once, in a fresh module (tracebacks quote its lines)."""
    return new_module(compile_cell(source, filename(grade_id)), module_name(grade_id, suffix), register=register)


def cell_frames(exc: BaseException, name: str | None = None) -> list[traceback.FrameSummary]:
    """The frames of ``exc``'s traceback in the cell compiled from ``name`` (None: in any answer
    cell), or its last frame when none is."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if (f.filename == name if name is not None else is_cell(f.filename))]
    return own or frames[-1:]


def traceback_text(exc: BaseException, name: str | None = None) -> str:
    """The traceback of ``exc`` cut to the frames of the cell (:func:`cell_frames`), one line each:
    ``  line 3, in f: x = 1 / 0``."""
    return "\n".join(f"  line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in cell_frames(exc, name))


def text(x, cap: int = MESSAGE_CAP) -> str:
    """``str(x)``, at most ``cap`` characters, even for an object whose ``__str__`` raises or lies."""
    try:
        s = str(x)
        if type(s) is not str:
            raise TypeError
    except BaseException:  # noqa: BLE001 - a __str__ that raises or lies
        s = f"<a {type(x).__name__} whose str() failed>"
    return s[:cap]


def missing(names, found, *, need_callable: bool = True) -> list[str]:
    """The names among ``names`` that the cell does not define (or defines as something not
    callable, when ``need_callable``). ``found``: the cell's module (subject side), or what the
    subject reported of each name (judge side, ``Answer.get``: ``{"defined", "callable", ...}``)."""
    out = []
    for name in names:
        if isinstance(found, types.ModuleType):
            value = getattr(found, name, _ABSENT)
            ok = value is not _ABSENT and (callable(value) or not need_callable)
        else:
            info = found.get(name) or {}
            ok = bool(info.get("defined")) and (bool(info.get("callable")) or not need_callable)
        if not ok:
            out.append(name)
    return out


def not_defined(name: str, cell: str, needs: str | Both = "") -> str:
    """What a student reads when the cell lacks a name of the contract:
    ``\\`tp_mlp\\` is not defined in the tensor_parallel cell (the contract needs ...)``; ``needs``:
    what the contract needs (the signatures: code, or a :class:`Both` where it has words)."""
    if needs:
        return M("not_defined_needs", name=name, cell=cell, needs=needs)
    return M("not_defined", name=name, cell=cell)


def expected_got(want: str, got: str, hidden: bool) -> Both:
    """ "expected W, got G" for a public case; for a case whose inputs are hidden (a relayed case's,
    graders/_hidden.py) its expected values stay hidden too: only what the cell returned. A
    :class:`Both`: each language's sentence around it takes its own side."""
    return M.both("got_hidden", got=got) if hidden else M.both("expected_got", want=want, got=got)


def cell_source(obj) -> str:
    """The whole notebook cell (as last run) that defined the class or function ``obj``."""
    funcs = []
    if isinstance(obj, type):
        funcs = [v for v in vars(obj).values() if isinstance(v, types.FunctionType)]
        funcs += [v.fget for v in vars(obj).values() if isinstance(v, property) and v.fget]
    elif isinstance(obj, types.FunctionType):
        funcs = [obj]
    for f in funcs:
        lines = linecache.getlines(f.__code__.co_filename)
        if lines:
            return "".join(lines)
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        raise ValueError(f"cannot find the source of {obj!r}: run its cell first") from None


def rank_copies(cell, name: str, world_size: int) -> list:
    """``name`` of the cell once per rank, each from a fresh run of the cell in a module of its own:
    ranks that are threads of one process then share no module state (a module-level buffer cache,
    a counter), as the ranks of a real world, processes, share none.

    ``cell``: the subject's cell (``cell.load()`` gives a fresh module; rank r keeps its module from
    one world to the next, as a rank's process keeps its state between calls), or in a notebook an object
    with ``cell.module.<name>``, whose notebook cell is run again in a module that starts from the
    notebook's globals (the names the cell defines are made anew; what other cells defined is
    shared, as the notebook has it). Where that cell cannot be found or run again, the same object
    serves every rank."""
    load = getattr(cell, "load", None)
    if callable(load):  # rank r's module is kept for the next world: a rank's process runs many calls
        modules = vars(cell).setdefault("rank_modules", [])
        while len(modules) < world_size:
            modules.append(load())
        return [getattr(modules[r], name, None) for r in range(world_size)]
    obj = getattr(cell.module, name)
    try:
        module = sys.modules.get(getattr(obj, "__module__", None) or "")
        names = getattr(obj, "__globals__", None) or vars(module)
        code = compile_cell(cell_source(obj), self_check_filename())
        copies = []
        for _ in range(world_size):
            fresh = types.ModuleType(f"{MODULE_PREFIX}copy")
            fresh.__dict__.update({k: v for k, v in names.items() if not k.startswith("__")})
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(code, fresh.__dict__)  # noqa: S102 - the student's own cell, in the student's notebook
            copies.append(fresh.__dict__[name])
        return copies
    except Exception:  # noqa: BLE001 - no source, or a cell that does not run twice: one object for all
        return [obj] * world_size
