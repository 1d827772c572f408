"""A static screen of an answer cell: an early warning for the TA, read by the judge.

The cell never runs in the judge (docs/design.md, "Judge and subject"), so the screen is not what
keeps verdicts safe. It sorts what it finds in two:

- **refused** (:func:`refusals`): spellings no exercise needs and that only serve to reach into
  the process that runs the cell — the kit's own modules, frames, code objects, closures and
  function globals, ``__subclasses__``, the builtins, trace and audit hooks, raw memory, ``eval``,
  ``exec`` and ``__import__``. Such a cell is not graded (0, "A TA will review it").
- **flagged** (the rest of :func:`screen`): idioms that honest code uses too — ``vars(self)``,
  ``setattr``/``getattr`` with a computed name, ``obj._private``, ``model.modules()``, assigning
  to a library's attribute (``torch.backends.cudnn.deterministic = True``), ``ray.kill``. They
  are printed under the verdict for the TA and change no score; the subject's tamper report and
  audit hook judge what the code actually does.
"""

from __future__ import annotations

import ast

FORBIDDEN_MODULES = {
    "ctypes",
    "gc",  # flagged only (gc.collect() is honest); the audit hook refuses its object lists
    "inspect",  # flagged only; the audit hook refuses frames
    "builtins",
    "importlib",  # flagged only; the audit hook judges what an import does
    "_thread",
    "faulthandler",
    "signal",
    "pty",
    "graders",
    "kit",
    "ch13lib",
    "hypothesis",
    "pytest",
    "nbgrader",
    # raw memory and C calls in-process (each can read the MAC key or patch the grader)
    "_ctypes",
    "cffi",
    "_cffi_backend",
    "_signal",
    "_testcapi",
    "_testinternalcapi",
    "_xxsubinterpreters",
    "_posixsubprocess",
}
FORBIDDEN_ATTRIBUTES = {
    "modules": "sys.modules",
    "_getframe": "sys._getframe",
    "settrace": "sys.settrace",
    "setprofile": "sys.setprofile",
    "monitoring": "sys.monitoring",
    "_current_frames": "sys._current_frames",
    "_exit": "os._exit",
    "f_back": "frame access",
    "f_globals": "frame access",
    "f_locals": "frame access",
    "tb_frame": "frame access",
    "gi_frame": "frame access",
    "__subclasses__": "type introspection",
    "__builtins__": "the builtins",
    "__globals__": "function globals",
    "__code__": "code objects",
    "addaudithook": "audit hooks",
    "__closure__": "closures",
    "cell_contents": "closures",
    "__dict__": "a namespace's __dict__",
    "__getattribute__": "attribute lookup by name",
    "attrgetter": "attribute lookup by name",
    "methodcaller": "attribute lookup by name",
    "__array_interface__": "raw memory",
    "__array_struct__": "raw memory",
    "ctypeslib": "raw memory",
    "kill": "killing processes",
    "killpg": "killing processes",
    "fork": "os.fork",
    "forkpty": "os.forkpty",
    "importlib": "the import machinery",
}
FORBIDDEN_CALLS = {"__import__", "eval", "exec", "compile", "globals", "breakpoint", "vars"}
ATTRIBUTE_CALLS = {"getattr", "setattr", "delattr", "hasattr"}
MEMORY_NAMES = {"__array_interface__", "__array_struct__"}
# Findings that honest code produces too: flagged for the TA, never refused.
HONEST_TOO = (
    "uses a namespace's __dict__",
    "uses sys.modules",
    "attribute lookup by name",  # imports or uses operator.attrgetter / methodcaller
    "imports gc",
    "imports inspect",
    "imports importlib",
    "imports from gc",
    "imports from inspect",
    "imports from importlib",
    "uses the import machinery",
    "uses globals",
    "uses killing processes",
    "uses vars",
    "with a computed attribute name",
    "of a private attribute",  # getattr(self, "_x") of its own
    "monkeypatches",
    "imports from ch13lib",
    "imports ch13lib",
)


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node


def _imported_names(tree: ast.AST) -> set[str]:
    """Names bound by import statements, and names assigned from them (aliases), anywhere."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    changed = True
    while changed:  # x = math; y = x.something  -> x and y are aliases too
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                root = _root(node.value)
                if isinstance(root, ast.Name) and root.id in names:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name) and n.id not in names:
                                names.add(n.id)
                                changed = True
    return names


SELF = ("self", "cls")


def _own_names(tree: ast.AST) -> set[str]:
    """Names the cell defines: its functions, classes, variables, arguments, attributes it sets on
    ``self``/``cls`` (``self._x = ...``, ``setattr(self, "_x", ...)``) and names in ``__slots__``.
    Setting ``comm._world = ...`` does not make ``_world`` the cell's, nor does a string constant
    elsewhere (``_FIELDS = ("_arr",)`` once made any private attribute "its own")."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Name) and node.value.id in SELF:
                own.add(node.attr)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            target, name = (node.args + [None, None])[:2]
            if isinstance(target, ast.Name) and target.id in SELF and isinstance(name, ast.Constant):
                own.add(str(name.value))
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            own.update(str(c.value) for c in ast.walk(node.value) if isinstance(c, ast.Constant))
    return own


def _foreign_privates(tree: ast.AST) -> dict[int, str]:
    """`obj._name` where the cell never defines `_name` itself: reaching into the simulators'
    internals (``comm._world.traffic[...] = 0`` hid a non-ring's traffic before this rule)."""
    own = _own_names(tree)
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in own
            and not (isinstance(node.value, ast.Name) and node.value.id in SELF)  # its own object
        ):
            found.setdefault(node.lineno, f"reaches into {ast.unparse(node)}, a private attribute it did not define")
        elif isinstance(node, ast.Call) and _called(node) in ("attrgetter", "methodcaller"):
            for arg in node.args:  # attrgetter("_world")(comm): the same reach, spelled as a string
                name = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
                for part in name.split("."):
                    if part.startswith("_") and not part.startswith("__") and part not in own:
                        found.setdefault(node.lineno, f"reaches into {part}, a private attribute it did not define")
    return found


def _called(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _modules_as_values(tree: ast.AST) -> dict[int, str]:
    """A module bound by ``import`` used as a value (``[threading][0].Thread = ...``, ``f(threading)``)
    instead of for one of its attributes: how monkeypatches get past the rule above."""
    modules = {
        (a.asname or a.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for a in node.names
    }
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in modules:
            parent = parents.get(node)
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                found.setdefault(node.lineno, f"uses the module {node.id} as a value")
    return found


def _monkeypatches(tree: ast.AST) -> dict[int, str]:
    """Assignments to (or deletions of) attributes of imported modules, classes and functions."""
    imported = _imported_names(tree)
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            for sub in _stored_into(t):
                root = _root(sub)
                if isinstance(root, ast.Name) and root.id in imported:
                    found.setdefault(node.lineno, f"monkeypatches {ast.unparse(sub)}")
    return found


def _stored_into(target: ast.AST):
    """The attributes an assignment target writes into: its own chain (``a.b.c``, ``a.b[i]``), not
    what an index reads (``partial[cuda.blockIdx.x] = s`` writes into ``partial``, not ``cuda``:
    reading the index as a target would flag every right reduction kernel)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _stored_into(element)
    elif isinstance(target, ast.Starred):
        yield from _stored_into(target.value)
    else:
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            if isinstance(target, ast.Attribute):
                yield target
            target = target.value


def refusals(source: str) -> list[str]:
    """The findings of :func:`screen` that no honest answer produces: the cell is not graded."""
    return [line for line in screen(source) if not any(h in line.split(": ", 2)[1] for h in HONEST_TOO)]


def screen(source: str) -> list[str]:
    """Everything the screen finds, one line per offending line ([] when clean)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the runner reports the syntax error itself
    found: dict[int, list[str]] = {}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    _add(found, line, f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                _add(found, line, f"imports from {node.module}")
            for alias in node.names:
                if alias.name in FORBIDDEN_ATTRIBUTES:
                    _add(found, line, f"imports {FORBIDDEN_ATTRIBUTES[alias.name]}")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            _add(found, line, f"uses {FORBIDDEN_ATTRIBUTES[node.attr]}")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_CALLS | {"__builtins__"} | MEMORY_NAMES:
            _add(found, line, f"uses {node.id}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_CALLS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                _add(found, line, f"{node.func.id} with a computed attribute name")
            elif name.value in FORBIDDEN_ATTRIBUTES or name.value in MEMORY_NAMES:
                _add(found, line, f"uses {FORBIDDEN_ATTRIBUTES.get(name.value, name.value)}")
            elif name.value.startswith("_") and not name.value.startswith("__"):
                target = node.args[0]
                if name.value in _own_names(tree) or (isinstance(target, ast.Name) and target.id in SELF):
                    _add(found, line, f"{node.func.id} of a private attribute {name.value!r}")
                else:
                    _add(found, line, f"reaches into {name.value}, a private attribute it did not define")
            elif node.func.id in ("setattr", "delattr") and node.args:
                root = _root(node.args[0])
                if isinstance(root, ast.Name) and root.id in _imported_names(tree):
                    _add(found, line, f"monkeypatches {ast.unparse(node.args[0])}.{name.value}")
        elif isinstance(node, ast.Constant) and node.value in MEMORY_NAMES:
            _add(found, line, f"uses {node.value}")
    for line, why in (
        list(_monkeypatches(tree).items())
        + list(_foreign_privates(tree).items())
        + list(_modules_as_values(tree).items())
    ):
        _add(found, line, why)
    lines = source.splitlines()
    return [
        f"line {n}: {why}: {lines[n - 1].strip() if 0 < n <= len(lines) else ''}"
        for n, whys in sorted(found.items())
        for why in whys
    ]


def _add(found: dict[int, list[str]], line: int, why: str) -> None:
    """Every finding of a line is kept: a harmless one (``_ = vars``) must not hide a refusal."""
    whys = found.setdefault(line, [])
    if why not in whys:
        whys.append(why)
