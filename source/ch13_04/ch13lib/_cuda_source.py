"""A cell's kernels as CUDA sees them (a part of :mod:`ch13lib.cuda_sim`).

A kernel is a function defined with ``@cuda.jit`` at the top of a cell. What it may read besides
its arguments is fixed when numba compiles it: what the cell imports from numba, numpy, math and
cmath, the constants it assigns from literals at its top (``TPB = 256``, ``TILE = 2 * 8``), and the
cell's device functions. :func:`kernel_source` reads exactly that from the cell's text, without
running the cell: the same text gives the functions numba compiles (the grading's compile check)
and the functions the checking simulator runs. So a simulated kernel reads nothing else of the
cell — no list, array or object made when the cell ran — and runs only what numba compiles.
"""

from __future__ import annotations

import ast
import builtins
import functools
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

LIBRARIES = ("numba", "numba.cuda", "numba.types", "numpy", "math", "cmath")
# what a constant's expression may call: numbers in, a number out
_CALLS = frozenset({"int", "float", "abs", "min", "max", "round", "len", "pow"})
_MAX_POW = 128  # exponent cap for a constant's ``**``: a constant is a size or a dtype, not a big number


_EMPTY: Mapping = types.MappingProxyType({})


class Lib(NamedTuple):
    """A name the cell imports from a library: ``module`` itself, or its attribute ``attr``. A tuple,
    like :class:`KernelSource`: no attribute of one can be set, not even with ``object.__setattr__``."""

    module: str
    attr: str | None = None


class KernelSource(NamedTuple):
    """What a cell defines for its kernels, read-only (the simulator builds every launch's kernel
    from it, beside the cell's code; a tuple of read-only mappings, so a cell that reaches the
    cached record cannot edit it). ``kernels``/``devices``: name -> the name of the def
    (``k = cuda.jit(f)`` names ``f``); ``values``: name -> a constant or a :class:`Lib`;
    ``unusable``: name -> why a kernel cannot read it."""

    code: types.CodeType | None
    kernels: Mapping = _EMPTY
    devices: Mapping = _EMPTY
    values: Mapping = _EMPTY
    unusable: Mapping = _EMPTY
    filename: str = ""
    starts: Mapping = _EMPTY  # def name -> its first line (its first decorator's): where it is in the text

    def namespace(self, cuda, numba, *, frozen: bool = True) -> dict:
        """The kernels' globals, with ``cuda`` and ``numba`` as given (numba's own to compile, the
        simulator's to run): the constants, the libraries (``frozen``: as they were before any cell
        ran, for the simulator; else the modules themselves, which numba's compiler types), and the
        cell's kernels and device functions as plain functions."""
        ns = {"__builtins__": builtins, "__name__": "cell"}
        for name, v in self.values.items():
            ns[name] = _resolve(v, cuda, numba, frozen) if isinstance(v, Lib) else v
        if self.code is not None:
            exec(self.code, ns)  # noqa: S102 - def statements only: no decorator, default or annotation runs
        for alias, name in {**self.kernels, **self.devices}.items():
            ns[alias] = ns[name]
        return ns

    def why_unreadable(self, name: str) -> str:
        return self.unusable.get(name, "it is not defined at the top of the cell")

    def _same_def(self, name: str, text: types.CodeType, running: types.FunctionType) -> bool:
        return _same_def_code(self.starts.get(name, -1), self.filename, text, running.__code__)

    def disagreement(self, fn: types.FunctionType) -> str | None:
        """The first name the kernel ``fn`` reads (itself, its device functions, their constants and
        libraries) whose value in the running cell is not what the cell's text says, or None.

        The simulator and the judge's compiler read a kernel from the text; numba on a GPU compiles
        the running cell's function with the running cell's globals. Wherever the two differ (a
        constant bound again by a form the reader does not follow, a name deleted, a device function
        swapped), the kernel that would run is not the one checked, so the launch fails: this asks
        the running cell itself, whatever spelling changed it."""
        codes = {
            c.co_name: c
            for c in (self.code.co_consts if self.code is not None else ())
            if isinstance(c, types.CodeType)
        }
        todo, seen = [(fn.__name__, fn)], set()
        while todo:
            name, running = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            text = codes.get(name)
            if text is None or not isinstance(running, types.FunctionType) or not self._same_def(name, text, running):
                return name
            for used in sorted(_globals_read(text)):
                now = running.__globals__.get(used, _MISSING)
                if used in self.values:
                    if not _same_value(self.values[used], now):
                        return used
                elif used in self.devices or used in self.kernels:
                    function = getattr(now, "py_func", None) or getattr(now, "fn", None) or now
                    todo.append((self.devices.get(used) or self.kernels[used], function))
                elif now is not _MISSING and now is not getattr(builtins, used, _MISSING):
                    return used  # a built-in the running cell binds (``for min in (max,)``), or a name it made
        return None


_MISSING = object()


def _same_def_code(start: int, filename: str, text: types.CodeType, running: types.CodeType) -> bool:
    """The running function is the text's def: compiled from the same file at the same line (its
    body is then the same text), with the same names and constants."""
    return (
        running.co_filename == filename
        and running.co_firstlineno == start
        and running.co_name == text.co_name
        and (running.co_names, running.co_varnames, running.co_freevars) == (text.co_names, text.co_varnames, ())
    )


def _globals_read(code: types.CodeType) -> set[str]:
    """The global names a function's code loads (attribute names are not globals)."""
    import dis

    return {i.argval for c in _nested(code) for i in dis.get_instructions(c) if i.opname == "LOAD_GLOBAL"}


def _nested(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def _same_value(text, now) -> bool:
    """Whether ``now`` (the running cell's global) is the value the text gave: the library object
    itself for a :class:`Lib`, else a constant of the same type and value (nan equal to nan)."""
    if isinstance(text, Lib):
        import importlib

        try:
            module = importlib.import_module(text.module)
            return now is (module if text.attr is None else getattr(module, text.attr))
        except (ImportError, AttributeError):
            return False
    if type(now) is not type(text):
        return False
    try:
        return bool(now == text) or (now != now and text != text)
    except Exception:  # noqa: BLE001 - an array's or an odd type's comparison: not the same constant
        return False


def _resolve(v: Lib, cuda, numba, frozen: bool):
    import importlib

    root = {"numba": numba, "numba.cuda": cuda}.get(v.module)
    if root is None and frozen:
        freeze_libraries()
        root = _LIBRARIES[v.module]
    elif root is None:
        root = importlib.import_module(v.module)
    return root if v.attr is None else getattr(root, v.attr)


def _frozen(module: types.ModuleType):
    """``module`` as a kernel reads it: its attributes as they were when this module was imported
    (before any cell), in an object that has no attribute of its own to set. A cell that rebinds
    ``math.isnan`` changes what its own code calls, not what the simulator runs."""
    items = types.MappingProxyType(dict(vars(module)))

    class Frozen:
        __slots__ = ()

        def __getattr__(self, name):
            try:
                return items[name]
            except KeyError:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

        def __repr__(self):
            return f"<module {module.__name__!r} as a kernel reads it>"

    Frozen.__name__ = Frozen.__qualname__ = module.__name__
    return Frozen()


def _snapshot() -> Mapping:
    import importlib

    import numba.types  # noqa: F401 - bound as numba's attribute, which a kernel may name

    return types.MappingProxyType(
        {m: _frozen(importlib.import_module(m)) for m in LIBRARIES if m not in ("numba", "numba.cuda")}
    )


_LIBRARIES: Mapping = _EMPTY  # the snapshot kernels read (freeze_libraries)


def freeze_libraries() -> None:
    """Take the snapshot of the libraries kernels read, once (later calls change nothing). A grading
    subject takes it before any cell runs (its harness's ``subject_setup``); a notebook at its first
    launch. Not at import: the judge imports this module and never imports numba."""
    global _LIBRARIES
    if not _LIBRARIES:
        _LIBRARIES = _snapshot()


def _library(module: str, attr: str | None):
    """The real object, to evaluate constants and decorators with (None when it does not exist)."""
    import importlib

    try:
        obj = _LIBRARIES.get(module) or importlib.import_module(module)
        if attr is None:
            return obj
        if not hasattr(obj, attr) and f"{module}.{attr}" in ("numba.cuda", "numba.types"):
            importlib.import_module(f"{module}.{attr}")
        return getattr(obj, attr)
    except (ImportError, AttributeError):
        return None


@functools.lru_cache(maxsize=64)
def kernel_source(text: str, filename: str = "<cell>") -> KernelSource:
    """Read a cell's kernels, device functions, library names and constants from its text."""
    try:
        tree = ast.parse(text, filename)
    except SyntaxError:
        return KernelSource(None)
    src = _Reading()
    defs: dict[str, ast.FunctionDef] = {}  # the defs kernels are made from
    plain: dict[str, ast.FunctionDef] = {}  # other defs (``k = cuda.jit(f)`` makes a kernel of one)
    declared_global = {name for n in ast.walk(tree) if isinstance(n, ast.Global) for name in n.names}
    for node in tree.body:
        _read_statement(node, src, defs, plain)
    for name in declared_global:  # a function may rebind it while the cell runs: no longer a constant
        src.values.pop(name, None)
        src.unusable[name] = "a function of the cell rebinds it (`global`), so it is no constant"
    for name in list(src.kernels) + list(src.devices):
        if name in src.unusable:  # bound again, later, to something else
            src.kernels.pop(name, None)
            src.devices.pop(name, None)
    nodes, starts = [], {}
    for name in {*src.kernels.values(), *src.devices.values()}:
        node = defs[name]
        starts[name] = min([node.lineno] + [d.lineno for d in node.decorator_list])
        node.decorator_list = []
        node.returns = None
        for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
            if a is not None:
                a.annotation = None
        nodes.append(node)
    nodes.sort(key=lambda n: n.lineno)
    code = compile(ast.Module(body=nodes, type_ignores=[]), filename, "exec", dont_inherit=True) if nodes else None
    frozen = types.MappingProxyType
    return KernelSource(
        code,
        frozen(dict(src.kernels)),
        frozen(dict(src.devices)),
        frozen(dict(src.values)),
        frozen(dict(src.unusable)),
        filename,
        frozen(starts),
    )


@dataclass
class _Reading:
    """A KernelSource while the cell's statements are read, top to bottom."""

    kernels: dict = field(default_factory=dict)
    devices: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    unusable: dict = field(default_factory=dict)


def _forget(src: _Reading, name: str, why: str) -> None:
    src.values.pop(name, None)
    src.kernels.pop(name, None)
    src.devices.pop(name, None)
    src.unusable[name] = why


def _bind(src: _Reading, name: str, value) -> None:
    src.unusable.pop(name, None)
    src.kernels.pop(name, None)
    src.devices.pop(name, None)
    src.values[name] = value


def _read_statement(node: ast.stmt, src: _Reading, defs: dict, plain: dict) -> None:
    if isinstance(node, ast.Import):
        for a in node.names:
            local = a.asname or a.name.split(".")[0]
            module = a.name if a.asname else a.name.split(".")[0]
            if module in LIBRARIES:
                _bind(src, local, Lib(module))
            else:
                _forget(src, local, f"it is the module {module}, which a kernel cannot use")
    elif isinstance(node, ast.ImportFrom):
        module = node.module or ""
        for a in node.names:
            local = a.asname or a.name
            if node.level == 0 and module in LIBRARIES and a.name != "*" and _library(module, a.name) is not None:
                _bind(src, local, Lib(module, a.name))
            else:
                _forget(src, local, f"it is imported from {module or '.'}, which a kernel cannot use")
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        kind = _jit_kind(node.decorator_list, src) if isinstance(node, ast.FunctionDef) else None
        if kind is None or not _literal_defaults(node):
            why = (
                "it is a Python function, not a device function (@cuda.jit(device=True))"
                if kind is None
                else "its parameters have defaults that are not literals"
            )
            _forget(src, node.name, why)
            plain[node.name] = node
            return
        _forget(src, node.name, "")
        src.unusable.pop(node.name)
        defs[node.name] = node
        (src.devices if kind == "device" else src.kernels)[node.name] = node.name
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            _assign(target, value, src, defs, plain)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        name = node.target.id
        try:
            _bind(src, name, _constant(ast.BinOp(ast.Name(name, ast.Load()), node.op, node.value), src))
        except ValueError as e:
            _forget(src, name, str(e))
    else:  # if/for/with/try/class/...: what they bind is decided when the cell runs
        for n in ast.walk(node):
            for name in _bound_names(n):
                _forget(src, name, "the cell binds it inside a statement (if, for, with, class...), not as a constant")


def _bound_names(n: ast.AST):
    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
        yield n.id
    elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield n.name
    elif isinstance(n, (ast.Import, ast.ImportFrom)):
        for a in n.names:
            yield (a.asname or a.name).split(".")[0]


def _assign(target, value, src: _Reading, defs: dict, plain: dict) -> None:
    if isinstance(target, ast.Name):
        made = _jit_call(value, src, defs, plain) if value is not None else None
        if made is not None:  # k = cuda.jit(f), d = cuda.jit(device=True)(f)
            kind, fname = made
            _forget(src, target.id, "")
            src.unusable.pop(target.id)
            (src.devices if kind == "device" else src.kernels)[target.id] = fname
            return
        try:
            if value is None:
                raise ValueError("it has no value")
            _bind(src, target.id, _constant(value, src))
        except ValueError as e:
            _forget(src, target.id, str(e))
        return
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
        if len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                _assign(t, v, src, defs, plain)
            return
    for n in ast.walk(target):
        for name in _bound_names(n):
            _forget(src, name, "the cell binds it at run time, not as a constant")


def _dotted(node) -> tuple[str, ...] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return (node.id, *reversed(parts))
    return None


def _lookup(parts, src: _Reading):
    """The real library object a dotted name means in the cell, or None."""
    v = src.values.get(parts[0])
    if not isinstance(v, Lib):
        return None
    obj = _library(v.module, v.attr)
    for p in parts[1:]:
        obj = getattr(obj, p, None)
    return obj


def _is_cuda_jit(node, src: _Reading) -> bool:
    parts = _dotted(node)
    if parts is None or parts[-1] != "jit":
        return False
    obj = _lookup(parts, src)
    module = getattr(obj, "__module__", "") or ""
    return obj is not None and module.startswith("numba.cuda")


def _jit_kind(decorators, src: _Reading) -> str | None:
    """ "kernel" or "device" for a lone @cuda.jit decorator (bare, or with device= only), else None."""
    if len(decorators) != 1:
        return None
    d = decorators[0]
    if isinstance(d, ast.Call):
        if not _is_cuda_jit(d.func, src):
            return None
        # Only device=: the judge compiles a kernel for the types it is launched with, and a declared
        # signature (or another option) would make numba on a GPU run something else
        if d.args or any(k.arg != "device" or not isinstance(k.value, ast.Constant) for k in d.keywords):
            return None
        device = any(k.value.value for k in d.keywords)
        return "device" if device else "kernel"
    return "kernel" if _is_cuda_jit(d, src) else None


def _jit_call(value, src: _Reading, defs: dict, plain: dict):
    """(kind, def name) for ``cuda.jit(f)`` or ``cuda.jit(device=True)(f)`` of a plain def above."""
    if not (isinstance(value, ast.Call) and len(value.args) == 1 and isinstance(value.args[0], ast.Name)):
        return None
    fname = value.args[0].id
    kind = _jit_kind([value.func], src) if isinstance(value.func, ast.Call) else None
    if kind is None and not value.keywords and _is_cuda_jit(value.func, src):
        kind = "kernel"
    if kind is None or fname not in plain or not _literal_defaults(plain[fname]):
        return None
    defs[fname] = plain[fname]
    return kind, fname


def _literal_defaults(node: ast.FunctionDef) -> bool:
    return all(isinstance(d, ast.Constant) for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)


def _constant(node, src: _Reading):
    """The value of a constant's expression: numbers, strings, tuples, arithmetic, earlier constants,
    a library's types and numbers (np.float32, math.pi) and a few calls on them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, str, bool, type(None))):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_constant(e, src) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not, ast.Invert)):
        v = _constant(node.operand, src)
        ops = {ast.USub: lambda: -v, ast.UAdd: lambda: +v, ast.Not: lambda: not v, ast.Invert: lambda: ~v}
        return _apply(ops[type(node.op)])
    if isinstance(node, ast.BinOp):
        a, b = _constant(node.left, src), _constant(node.right, src)
        if isinstance(node.op, ast.Pow) and not (isinstance(b, (int, float)) and abs(b) <= _MAX_POW):
            raise ValueError("its value is too large a power to be a constant")
        ops = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b if not isinstance(a, (str, tuple)) and not isinstance(b, (str, tuple)) else _no(),
            ast.Div: lambda: a / b,
            ast.FloorDiv: lambda: a // b,
            ast.Mod: lambda: a % b,
            ast.Pow: lambda: a**b,
            ast.LShift: lambda: a << b if b <= _MAX_POW else _no(),
            ast.RShift: lambda: a >> b,
            ast.BitAnd: lambda: a & b,
            ast.BitOr: lambda: a | b,
            ast.BitXor: lambda: a ^ b,
        }
        if type(node.op) not in ops:
            raise ValueError("its value is not a constant expression")
        return _apply(ops[type(node.op)])
    if isinstance(node, ast.Name):
        if node.id in src.values:
            v = src.values[node.id]
            if isinstance(v, Lib):
                return _number_like(_lookup((node.id,), src), node.id)
            return v
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        raise ValueError(f"its value reads `{node.id}`, which is not a constant of the cell")
    if isinstance(node, ast.Attribute):
        parts = _dotted(node)
        if parts is not None and _lookup(parts[:1], src) is not None:
            return _number_like(_lookup(parts, src), ".".join(parts))
        raise ValueError("its value is not a constant expression")
    if isinstance(node, ast.Call) and not node.keywords:
        args = [_constant(a, src) for a in node.args]
        parts = _dotted(node.func)
        fn = None
        if parts is not None and len(parts) == 1 and parts[0] in _CALLS and parts[0] not in src.values:
            fn = getattr(builtins, parts[0])
        elif parts is not None and parts[0] in src.values:
            obj = _lookup(parts, src)
            if callable(obj) and (getattr(obj, "__module__", None) == "math" or _is_type(obj)):
                fn = obj
        if fn is None:
            raise ValueError("its value calls something other than a number's type or math's functions")
        return _apply(lambda: fn(*args))
    raise ValueError("its value is not made from literals")


def _no():
    raise ValueError("its value is not a small constant")


_PLAIN = (int, float, complex, bool, str, type(None))


def _apply(f):
    try:
        v = f()
    except (ArithmeticError, TypeError, ValueError) as e:
        raise ValueError(f"its value cannot be computed ({type(e).__name__})") from None
    if type(v) is int and v.bit_length() > 4096:
        raise ValueError("its value is too large to be a constant")
    if not (type(v) in _PLAIN or _library_scalar(v) or _is_type(v)):  # never an object with methods of its own
        raise ValueError(f"its value is a {type(v).__name__}, not a number")
    return v


def _libraries_own(obj) -> bool:
    """Defined by numpy or numba themselves (by the module its class names; the cell's own classes,
    which could compute anything in an operator, are never)."""
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in ("numpy", "numba")


def _library_scalar(v) -> bool:
    import numpy as np

    return isinstance(v, np.generic) and _libraries_own(type(v)) and type(v).__module__ == "numpy"


def _is_type(obj) -> bool:
    """A numpy scalar type, a numpy dtype or a numba type, the libraries' own: what a kernel names as
    a dtype."""
    import numpy as np

    if isinstance(obj, type) and issubclass(obj, np.generic):
        return obj.__module__ == "numpy"
    if type(obj) is np.dtype or (isinstance(obj, np.dtype) and _libraries_own(type(obj))):
        return True
    try:
        from numba.core import types as numba_types
    except ImportError:  # pragma: no cover - numba is part of the kit
        return False
    return isinstance(obj, numba_types.Type) and _libraries_own(type(obj))


def _number_like(obj, label: str):
    if type(obj) in _PLAIN or _library_scalar(obj) or _is_type(obj):
        return obj
    raise ValueError(f"its value reads `{label}`, which is not a number or a type")
