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
    "gc",
    "inspect",
    "builtins",
    "importlib",
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
    "uses attribute lookup by name",
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


def _own_names(tree: ast.AST) -> set[str]:
    """Names the cell defines: its functions, classes, variables, arguments, and attributes it
    sets on ``self``/``cls`` (setting ``comm._world = ...`` does not make ``_world`` the cell's)."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                own.add(node.attr)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            own.add(node.value)  # FIELDS = ("_count",) then setattr(self, name, ...)
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
        ):
            found.setdefault(node.lineno, f"reaches into {ast.unparse(node)}, a private attribute it did not define")
    return found


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
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute):
                    root = _root(sub)
                    if isinstance(root, ast.Name) and root.id in imported:
                        found.setdefault(node.lineno, f"monkeypatches {ast.unparse(sub)}")
    return found


def refusals(source: str) -> list[str]:
    """The findings of :func:`screen` that no honest answer produces: the cell is not graded."""
    return [line for line in screen(source) if not any(h in line.split(": ", 2)[1] for h in HONEST_TOO)]


def screen(source: str) -> list[str]:
    """Everything the screen finds, one line per offending line ([] when clean)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the runner reports the syntax error itself
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    found.setdefault(line, f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                found.setdefault(line, f"imports from {node.module}")
            for alias in node.names:
                if alias.name in FORBIDDEN_ATTRIBUTES:
                    found.setdefault(line, f"imports {FORBIDDEN_ATTRIBUTES[alias.name]}")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            found.setdefault(line, f"uses {FORBIDDEN_ATTRIBUTES[node.attr]}")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_CALLS | {"__builtins__"} | MEMORY_NAMES:
            found.setdefault(line, f"uses {node.id}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_CALLS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                found.setdefault(line, f"{node.func.id} with a computed attribute name")
            elif name.value in FORBIDDEN_ATTRIBUTES or name.value in MEMORY_NAMES:
                found.setdefault(line, f"uses {FORBIDDEN_ATTRIBUTES.get(name.value, name.value)}")
            elif name.value.startswith("_") and not name.value.startswith("__"):
                if name.value in _own_names(tree):
                    found.setdefault(line, f"{node.func.id} of a private attribute {name.value!r}")
                else:
                    found.setdefault(line, f"reaches into {name.value}, a private attribute it did not define")
            elif node.func.id in ("setattr", "delattr") and node.args:
                root = _root(node.args[0])
                if isinstance(root, ast.Name) and root.id in _imported_names(tree):
                    found.setdefault(line, f"monkeypatches {ast.unparse(node.args[0])}.{name.value}")
        elif isinstance(node, ast.Constant) and node.value in MEMORY_NAMES:
            found.setdefault(line, f"uses {node.value}")
    for line, why in (
        list(_monkeypatches(tree).items())
        + list(_foreign_privates(tree).items())
        + list(_modules_as_values(tree).items())
    ):
        found.setdefault(line, why)
    lines = source.splitlines()
    return [
        f"line {n}: {why}: {lines[n - 1].strip() if 0 < n <= len(lines) else ''}" for n, why in sorted(found.items())
    ]
