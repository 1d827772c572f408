"""The subject's runtime guard: a PEP 578 audit hook that judges each event by who calls.

Installed by kit/subject.py before the student's cell first runs; Python code cannot remove an
audit hook. It is the second line of defence: the first is that the subject holds no key, no
hidden data and decides no verdict (docs/design.md, "Judge and subject").

The standard library raises some of these events for its own work (warnings and logging take
frames, subprocess and dataclasses write attributes, namedtuple compiles code), so an event is
refused only when the student's cell asked for it: the nearest frame that is not an introspection
helper or trampoline (traceback, inspect, functools, threading...) is the student's, or there is no
such frame at all (a thread whose target is a C function such as ``exec``), or the event is one
that only trusted harness code may raise at all (trace hooks, the garbage collector's object
lists). A library frame counts as asking for itself only for the events ON_BEHALF lists for it,
from code that names what it calls (CALLS), or while an import runs its module's top-level code;
otherwise it is looked through to the frames below it, and a student's frame there asked.
Refused events raise PermissionError in the student's code and are recorded for the TA ("flagged
for review").

Who a frame belongs to is read from the FILE its code was compiled from, never from its globals
(a cell can set its own ``__name__``): code from a file of the standard library or site-packages is
library code, named by its top-level module; code from the kit's and ch13lib's folders is trusted
harness code; everything else — the cell, code compiled from a string (``<string>``), a file the
cell wrote and imported — is the student's.
Routes that raise no event at all (reading sys.modules, a signal handler's frame, raw memory
through numpy) are listed in docs/sandbox.md, "What remains".
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import threading
import types

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
        # trampolines: they call what they are given (a thread's target, a pool's task)
        "threading",
        "_threading_local",
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
# Libraries that raise these events as part of their own work while a student's code is on the
# stack, and hand the student nothing of it: the only library frames through which a student's
# stack may raise them. Any other library frame is a trampoline (weakref.finalize,
# contextlib.ExitStack.callback...: they call what they are given) and the event is the student's.
# Even a listed library speaks for itself only from code that names what it calls (CALLS): a
# generic wrapper it also has (typing_extensions.deprecated) calls whatever it was given. Found by
# grading the catalogue: each entry is an honest answer's need.
ON_BEHALF = {
    # frames: warnings and logging find their caller; namedtuple, enum and typing the caller's
    # module; typing_extensions looks at typing's own frame
    "sys._getframe": frozenset({"warnings", "logging", "collections", "enum", "typing", "typing_extensions", "torch"}),
    "sys._getframemodulename": frozenset({"collections", "enum", "typing"}),
    "object.__getattr__": frozenset({"warnings", "logging", "collections", "enum", "typing", "typing_extensions"}),
    # code: dataclasses and namedtuple build methods from source; ast.parse (literal_eval, and the
    # carets of every 3.11 traceback) compiles to a tree, never to code; importlib: see below
    "compile": frozenset({"dataclasses", "collections", "typing", "ast"}),
    "exec": frozenset({"dataclasses", "collections", "typing"}),
    # Ray's driver: ray.get unpickles results and errors, ray.shutdown stops its own processes
    "pickle.find_class": frozenset({"ray", "torch"}),  # and torch.load, torch.distributed.checkpoint
    "os.kill": frozenset({"ray"}),
    "subprocess.Popen": frozenset({"ray"}),
}
CALLS = {  # names (or name endings) the library's own code must mention to raise the event itself
    # torch.manual_seed queues the CUDA seeding with traceback.format_stack(): text, no frames
    "sys._getframe": ("_getframe", "format_stack"),
    "sys._getframemodulename": ("_getframemodulename",),
    "compile": ("compile", "exec", "eval"),  # exec and eval compile a string first
    "exec": ("exec", "eval"),
    "pickle.find_class": ("loads", "load"),
    "os.kill": ("kill", "terminate", "send_signal"),
    "subprocess.Popen": ("Popen",),
}
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
        # unpickling a global: `getattr` or any harness function under no name the screen can see
        "pickle.find_class",
        # file locks: the kernel's lock table is one for the whole machine, and every job binds the
        # same interpreter files: a byte per lock offset on os.py moved all_reduce's tensors between
        # a world's ranks, and could between two students' jobs. No exercise locks.
        "fcntl.flock",
        "fcntl.lockf",
        "os.lockf",
        "fcntl.fcntl",  # its lock and pipe-size commands only (LOCK_COMMANDS, PIPE_SIZE_COMMANDS)
    }
)
# fcntl.fcntl's lock and lease commands: F_GETLK, F_SETLK, F_SETLKW, their OFD forms, F_SETLEASE, F_GETLEASE
LOCK_COMMANDS = frozenset({5, 6, 7, 36, 37, 38, 1024, 1025})
# and its pipe-size commands, F_SETPIPE_SZ and F_GETPIPE_SZ: the pipe buffers of a uid share one
# budget (fs.pipe-user-pages-soft), which one rank can fill and another read back: a channel past the broker
PIPE_SIZE_COMMANDS = frozenset({1031, 1032})
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

FROZEN = re.compile(r"<frozen [A-Za-z0-9_.]+>")


def library_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(library folders, trusted harness folders), longest first: site-packages lies inside the
    venv's platstdlib, and must be named by the package below it."""
    paths = sysconfig.get_paths()
    lib = {paths[k] for k in ("purelib", "platlib", "stdlib", "platstdlib") if paths.get(k)}
    lib |= {os.path.realpath(p) for p in lib}
    kit_dir = os.path.dirname(os.path.abspath(__file__))
    trusted = {kit_dir, os.path.realpath(kit_dir)}
    for entry in sys.path:  # ch13lib, wherever this process imports it from
        candidate = os.path.join(entry or os.getcwd(), "ch13lib")
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            trusted |= {os.path.abspath(candidate), os.path.realpath(candidate)}
    order = lambda ps: tuple(sorted(ps, key=len, reverse=True))
    return order(lib), order(trusted)


def classify(filename: str, roots=None) -> tuple[str, str]:
    """("student" | "lib" | "trusted", top-level module) of the code compiled from ``filename``."""
    lib, trusted = roots or library_roots()
    if type(filename) is not str:
        return "student", ""
    for root in trusted:
        if filename.startswith(root + os.sep):
            return "trusted", os.path.basename(root)
    for root in lib:
        if filename.startswith(root + os.sep):
            first = filename[len(root) + 1 :].split(os.sep, 1)[0]
            return "lib", first[:-3] if first.endswith(".py") else first
    if FROZEN.fullmatch(filename):
        return "lib", filename[len("<frozen ") : -1].split(".")[0]
    return "student", ""


# Reading a traceback's frames to *format* it (traceback.print_exc, logging.exception) is what
# every honest retry loop does: for tb_frame reads these formatting modules count as the caller.
FORMATTERS = frozenset({"traceback", "logging", "linecache"})


def seal_memory() -> None:
    """Make this process's memory unreachable to itself as raw bytes, and to its uid: not dumpable,
    so /proc/self/mem (which any process may otherwise open and write, with no audit event but
    ``open``), /proc/PID/mem, ptrace and process_vm_writev are refused by the kernel; children
    inherit it, ``execve`` resets it. Call before the cell runs (ctypes is refused to it after)."""
    loaded = set(sys.modules)
    import ctypes

    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    for name in set(sys.modules) - loaded:  # so that the cell's own `import ctypes` is still an event
        del sys.modules[name]


def install():
    """Install the hook; return the function that hands over (and forgets) the refused events.

    Everything the hook decides with is bound here, in its closure, when it is installed: the
    hook object itself is reachable only from the interpreter's list of audit hooks (not from
    Python), so a cell that rebinds this module's tables changes nothing. Keep the returned
    function private (kit/subject.py holds it in a local variable)."""
    from ch13lib.lang import say  # the student's words, in the judge's language (CH13_LANG)

    events: list[str] = []
    local = threading.local()
    getframe, helpers, one_hop, trusted = sys._getframe, HELPERS, ONE_HOP, TRUSTED
    frame_attrs, func_attrs, forbidden = FRAME_ATTRS, FUNC_ATTRS, FORBIDDEN_IMPORTS
    lock_commands = LOCK_COMMANDS | PIPE_SIZE_COMMANDS
    from_student, prefixes, trusted_only_events = FROM_STUDENT, FROM_STUDENT_PREFIXES, TRUSTED_ONLY
    formatters, here, roots, sort_of, on_behalf, calls = (
        FORMATTERS,
        __file__,
        library_roots(),
        classify,
        dict(ON_BEHALF),
        dict(CALLS),
    )
    known: dict = {}  # filename -> (kind, module), filled as frames are met
    code_type = types.CodeType

    def origin(frame) -> tuple[str, str]:
        name = frame.f_code.co_filename
        got = known.get(name)
        if got is None:
            got = sort_of(name, roots)
            if len(known) < 10_000:
                known[name] = got
        return got

    def module_of(frame) -> str:
        kind, module = origin(frame)
        return "" if kind == "student" else module

    def student(frame) -> bool:
        return frame is not None and origin(frame)[0] == "student"

    def asked_by_student(frame, event: str, args: tuple) -> bool:
        if event == "object.__getattr__" and args[1] == "tb_frame" and module_of(frame) in formatters:
            return False  # formatting an exception, not walking frames
        while frame is not None and origin(frame)[0] == "lib" and origin(frame)[1] in helpers:
            frame = frame.f_back
        if frame is None:
            return True  # only trampolines below: a thread or task whose target is the C function itself
        if student(frame):
            return True
        if origin(frame)[0] == "trusted":
            return False  # the harness's own work
        if module_of(frame) in one_hop and student(frame.f_back):
            return True
        # A library frame: the library's own work only if it may raise this event for anyone, or
        # if the harness, not a student, called it. A thread with neither below is a student's
        # trampoline too (a Thread whose target is weakref.finalize).
        if module_of(frame) in on_behalf.get(event, ()) and names_its_call(frame, event, args):
            return False
        if module_of(frame) == "importlib" and imports_a_library(event, args):
            return False
        while frame is not None:
            kind = origin(frame)[0]
            if kind != "lib":
                return kind == "student"
            if (
                frame.f_code.co_name == "<module>"
                and frame.f_back is not None
                and module_of(frame.f_back) == "importlib"
            ):
                return False  # a library's own top-level code, run by an import (numba loading LLVM)
            frame = frame.f_back
        return True

    def names_its_call(frame, event: str, args: tuple) -> bool:
        """The library frame's own code mentions what raised the event: it called it, rather than
        calling something it was handed (a trampoline hands the student whatever it returns)."""
        wanted = (args[1],) if event == "object.__getattr__" else calls.get(event, ())
        return any(name.endswith(w) for name in frame.f_code.co_names for w in wanted)

    def imports_a_library(event: str, args: tuple) -> bool:
        """importlib compiling or running a library module's source (never a harness module's,
        whose code run under other globals would be trusted code doing the student's bidding)."""
        if event == "exec":
            code = args[0] if args else None
            return (
                type(code) is code_type and code.co_name == "<module>" and sort_of(code.co_filename, roots)[0] == "lib"
            )
        if event == "compile":
            return len(args) > 1 and type(args[1]) is str and sort_of(args[1], roots)[0] == "lib"
        return False

    def relevant(event: str, args: tuple) -> bool:
        if event == "fcntl.fcntl":
            return len(args) > 1 and args[1] in lock_commands
        if event == "import":
            name = args[0] if args and type(args[0]) is str else ""
            return name.split(".")[0] in forbidden
        if event == "object.__getattr__":
            return len(args) > 1 and args[1] in frame_attrs
        if event in ("object.__setattr__", "object.__delattr__"):
            target = args[0] if args else None
            if len(args) < 2 or args[1] not in func_attrs:
                return False
            code = getattr(target, "__code__", None) if type(target).__name__ == "function" else None
            return not (code is not None and sort_of(code.co_filename, roots)[0] == "student")  # their own: fine
        return True

    def hook(event: str, args: tuple) -> None:
        # The fast path first: the scheduler's tracer alone raises ~10^6 events a grading.
        if event == "object.__getattr__":
            if len(args) < 2 or args[1] not in frame_attrs:
                return
        elif event not in from_student and event not in trusted_only_events and not event.startswith(prefixes):
            return
        if getattr(local, "busy", False) or not relevant(event, args):
            return
        local.busy = True
        try:
            try:
                caller = getframe(1)
            except ValueError:  # no Python frame below the hook: a raw thread running a C function
                caller = None
            while caller is not None and caller.f_code.co_filename == here:
                caller = caller.f_back
            if event in trusted_only_events:
                refuse = caller is None or origin(caller)[0] != "trusted" or module_of(caller) not in trusted
            else:
                refuse = asked_by_student(caller, event, args)
        finally:
            local.busy = False
        if not refuse:
            return
        what = event + (f" {args[0]}" if event == "import" else f" .{args[1]}" if event.startswith("object.") else "")
        f = caller
        while f is not None and not student(f):
            f = f.f_back
        where = " " + say(f"(单元第 {f.f_lineno} 行)", f"(line {f.f_lineno} of the cell)") if f is not None else ""
        if len(events) < 50:
            events.append(what + where)
        raise PermissionError(
            say(
                f"评分沙箱拒绝了 `{what}`: 没有哪个练习需要它; 助教会复查这个单元",
                f"the grading sandbox refused `{what}`: no exercise needs it; a TA will review this cell",
            )
        )

    def refused() -> list[str]:
        out = list(events)
        events.clear()
        return out

    sys.addaudithook(hook)
    return refused
