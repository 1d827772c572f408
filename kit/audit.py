"""The subject's runtime guard: a PEP 578 audit hook that judges each event by who calls.

Installed by kit/subject.py before the student's cell first runs; Python code cannot remove an
audit hook. It is the second line of defence: the first is that the subject holds no key, no
hidden data and decides no verdict (docs/design.md, "Judge and subject").

The standard library raises some of these events for its own work (warnings and logging take
frames, subprocess and dataclasses write attributes, namedtuple compiles code), so an event is
refused only when the student's cell asked for it: the nearest frame that is not an introspection
helper (traceback, inspect, string...) is in the cell, or the event is one that only trusted
harness code may raise at all (trace hooks, the garbage collector's object lists). Refused events
raise PermissionError in the student's code and are recorded for the TA ("flagged for review").
Routes that raise no event at all (reading sys.modules, a signal handler's frame, raw memory
through numpy) are listed in docs/sandbox.md, "What remains".
"""

from __future__ import annotations

import sys
import threading

STUDENT_PREFIX = "<answer cell"
# Modules whose frames are transparent: a student who asks traceback.walk_stack() for frames asked.
HELPERS = frozenset(
    {
        "traceback",
        "inspect",
        "string",
        "pdb",
        "bdb",
        "cgitb",
        "pydoc",
        "dis",
        "code",
        "codeop",
        "operator",
        "functools",
        "reprlib",
        "pprint",
        "copy",
        "copyreg",
        # Python-level wrappers that raise the event on the caller's behalf
        "subprocess",
        "os",
        "pty",
        "multiprocessing",
        "concurrent",
        "asyncio",
    }
)
ONE_HOP = frozenset({"logging"})  # logging.currentframe() called by the student, not logging's own use
TRUSTED = ("ch13lib", "kit")  # harness code that may trace, walk frames and list gc objects
FRAME_ATTRS = frozenset(
    {
        "tb_frame",
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "gi_code",
        "cr_code",
        "ag_code",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
    }
)
FUNC_ATTRS = frozenset({"__code__", "__globals__", "__defaults__", "__kwdefaults__", "__closure__"})
FORBIDDEN_IMPORTS = (
    "graders",
    "kit",
    "hypothesis",
    "pytest",
    "_pytest",
    "nbgrader",
    "ctypes",
    "_ctypes",
    "cffi",
    "_cffi_backend",
    "_testcapi",
    "_testinternalcapi",
    "_xxsubinterpreters",
    "gc",
)
# Events refused when the student asked for them (exact names, then prefixes).
FROM_STUDENT = frozenset(
    {
        "sys._getframe",
        "object.__getattr__",
        "object.__setattr__",
        "object.__delattr__",
        "code.__new__",
        "function.__new__",
        "compile",
        "exec",
        "os.system",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.posix_spawnp",
        "subprocess.Popen",
        "os.kill",
        "os.killpg",
        "pty.spawn",
        "import",
        "sys._getframemodulename",
    }
)
FROM_STUDENT_PREFIXES = ("ctypes.", "os.exec", "os.spawn")
# Only trusted harness code may raise these, whoever is further up the stack.
TRUSTED_ONLY = frozenset(
    {
        "sys.settrace",
        "sys.setprofile",
        "sys._current_frames",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys.addaudithook",
        "cpython.PyInterpreterState_Clear",
        "cpython._PySys_ClearAuditHooks",
    }
)

_events: list[str] = []  # what was refused, for the TA (read by kit/subject.py)
_local = threading.local()  # per thread: inside the hook already (the hook's own events)


def _module_of(frame) -> str:
    try:
        return (frame.f_globals.get("__name__") or "").split(".")[0]
    except Exception:  # noqa: BLE001 - a frame with odd globals: unknown module
        return ""


def _student(frame) -> bool:
    return frame is not None and frame.f_code.co_filename.startswith(STUDENT_PREFIX)


def _asked_by_student(frame) -> bool:
    """Does the nearest non-helper frame, from the event's caller outwards, belong to the cell?"""
    while frame is not None and _module_of(frame) in HELPERS:
        frame = frame.f_back
    if _student(frame):
        return True
    return frame is not None and _module_of(frame) in ONE_HOP and _student(frame.f_back)


def _relevant(event: str, args: tuple) -> bool:
    if event == "import":
        name = args[0] if args and type(args[0]) is str else ""
        return name.split(".")[0] in FORBIDDEN_IMPORTS
    if event == "object.__getattr__":
        return len(args) > 1 and args[1] in FRAME_ATTRS
    if event in ("object.__setattr__", "object.__delattr__"):
        target = args[0] if args else None
        if len(args) < 2 or args[1] not in FUNC_ATTRS:
            return False
        code = getattr(target, "__code__", None) if type(target).__name__ == "function" else None
        return not (code is not None and code.co_filename.startswith(STUDENT_PREFIX))  # their own: fine
    return True


def _hook(event: str, args: tuple) -> None:
    # The fast path first: the scheduler's tracer alone raises ~10^6 events a grading (f_code reads).
    if event == "object.__getattr__":
        if len(args) < 2 or args[1] not in FRAME_ATTRS:
            return
    elif event not in FROM_STUDENT and event not in TRUSTED_ONLY and not event.startswith(FROM_STUDENT_PREFIXES):
        return
    if getattr(_local, "busy", False) or not _relevant(event, args):
        return
    trusted_only = event in TRUSTED_ONLY
    _local.busy = True
    try:
        caller = sys._getframe(1)
        while caller is not None and caller.f_code.co_filename == __file__:
            caller = caller.f_back
        if trusted_only:
            refuse = _module_of(caller) not in TRUSTED
        else:
            refuse = _asked_by_student(caller)
    finally:
        _local.busy = False
    if refuse:
        what = event + (f" {args[0]}" if event == "import" else f" .{args[1]}" if event.startswith("object.") else "")
        where = ""
        f = caller
        while f is not None and not _student(f):
            f = f.f_back
        if f is not None:
            where = f" (line {f.f_lineno} of the cell)"
        if len(_events) < 50:
            _events.append(what + where)
        raise PermissionError(f"the grading sandbox refused `{what}`: no exercise needs it; a TA will review this cell")


def install() -> None:
    sys.addaudithook(_hook)


def refused() -> list[str]:
    """The refused events so far, and forget them."""
    out = list(_events)
    _events.clear()
    return out
