"""A static screen of an answer cell for attempts to tamper with the grader process.

Student code runs inside the grader's process (sandboxed, see kit/sandbox.py). Code that reaches
into that process — the module table, interpreter frames, the garbage collector's object lists,
tracing hooks, ctypes, the builtins — could forge a verdict, so such a cell is not graded: it
scores 0 and the TA sees which lines were flagged. None of these is needed by any exercise.
"""
from __future__ import annotations

import ast

FORBIDDEN_MODULES = {"ctypes", "gc", "inspect", "builtins", "importlib", "_thread", "faulthandler",
                     "signal", "pty", "graders", "ch13lib", "hypothesis", "pytest", "nbgrader"}
FORBIDDEN_ATTRIBUTES = {
    "modules": "sys.modules", "_getframe": "sys._getframe", "settrace": "sys.settrace",
    "setprofile": "sys.setprofile", "monitoring": "sys.monitoring", "_current_frames": "sys._current_frames",
    "_exit": "os._exit", "f_back": "frame access", "f_globals": "frame access", "f_locals": "frame access",
    "tb_frame": "frame access", "gi_frame": "frame access", "__subclasses__": "type introspection",
    "__builtins__": "the builtins", "__globals__": "function globals",
    "__code__": "code objects", "addaudithook": "audit hooks",
    "__closure__": "closures", "cell_contents": "closures", "kill": "killing processes", "killpg": "killing processes", "fork": "os.fork", "forkpty": "os.forkpty",
}
FORBIDDEN_CALLS = {"__import__", "eval", "exec", "compile", "globals", "breakpoint", "vars"}


def screen(source: str) -> list[str]:
    """Reasons this cell must not run in the grader, one per offending line ([] when clean)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []           # the runner reports the syntax error itself
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
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_CALLS | {"__builtins__"}:
            found.setdefault(line, f"uses {node.id}")
    lines = source.splitlines()
    return [f"line {n}: {why}: {lines[n - 1].strip() if 0 < n <= len(lines) else ''}"
            for n, why in sorted(found.items())]
