"""Do the notebooks' public self-checks tell the truth? Run each catalogue answer through them.

    .venv/bin/python -m kit.selfchecks [GRADE_ID ...] [--jobs N] [--markdown]

For every catalogue entry (graders/catalogue/<grade_id>/{right,wrong}_*.py) this runs, in a fresh
Python process, the code cells of the answer's source notebook as a student would: the cells
before the answer cell, the entry as the answer cell (other answer cells hold their reference
solutions), then the self-check cells that follow it. Hidden test cells and other exercises'
self-checks are skipped. The self-check *flags* the entry when a cell raises, a line starts with
✘ or "…" (not answered), or the self-check call returns False.

The fresh process is forked from a warm interpreter per notebook (ZYGOTE below) that has already
imported what the notebook's cells import (torch, numpy, numba, ray, ch13lib), so no entry pays
for starting Python and importing torch again; the outcomes are those of `python -c RUNNER`,
which is still used where the warm interpreter cannot fork safely.

Prints, per grade_id, how many wrong answers the self-check flags and whether a right one was
flagged (a false alarm). tests/test_selfchecks.py holds every cell to the bar: at least 90 % of the
wrong answers flagged, no right answer flagged.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import glob
import json
import locale
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat

from graders import _catalogue as catalogue
from kit import ASSIGNMENT, ROOT, STEADY_ENV
from kit.answers import answer_cells, hidden_test_cells, reference_solutions

SOURCE = os.path.join(ROOT, "source", ASSIGNMENT)
BAR = 0.90
TIMEOUT_S = 300

RUNNER = r'''
import ast, contextlib, io, json, linecache, os, sys
sys.path.insert(0, os.environ["CH13_SELFCHECK_LIB"])
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
cells = json.loads(sys.stdin.read())
ns = {"__name__": "__main__"}
out = io.StringIO()
flagged, why = False, ""
for i, (kind, source) in enumerate(cells):
    name = f"<ipython-input-{i}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(tree, name, "exec"), ns)
            value = eval(compile(ast.Expression(last.value), name, "eval"), ns) if last else None
    except BaseException as e:
        if kind == "check":
            flagged, why = True, f"raised {type(e).__name__}: {e}"[:300]
        elif kind == "answer":
            pass        # a student sees the traceback; the self-check below still runs on what is defined
        else:
            print(json.dumps({"error": f"setup cell {i} raised {type(e).__name__}: {e}"[:500]}))
            sys.exit(0)
        value = None
    text = buf.getvalue()
    if kind == "check":
        out.write(text)
        lines = [l.strip() for l in text.splitlines()]
        if any(l.startswith(("✘", "…")) for l in lines):
            flagged, why = True, next(l for l in lines if l.startswith(("✘", "…")))[:300]
        if value is False or (isinstance(value, dict) and any(v is not True for v in value.values())):
            flagged, why = True, why or f"returned {value!r}"[:300]
print(json.dumps({"flagged": flagged, "why": why}), flush=True)
import atexit
atexit._run_exitfuncs()  # what the cells registered (ch13lib's Ray shutdown removes its folder)
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)  # then no teardown of torch's modules: it cost a forked entry ~1.2 CPU-s
'''

# A warm interpreter for one notebook's entries, the "zygote". Starting Python and importing what
# the setup cells import (torch: ~1.2 CPU-s) cost most entries more than their self-check does. So
# the zygote imports those modules once and then forks one child per entry: each entry still runs
# RUNNER in a fresh process of its own (entries never see each other's state), as a copy of an
# interpreter that has imported the modules and run nothing else. Forking is safe only from a
# single-threaded process: the zygote reports its thread count after the imports, and the
# measure falls back to plain `python -c RUNNER` processes if it is not 1.
#
# The measure sends "fork" with the entry's three pipe ends (stdin, stdout, stderr: SCM_RIGHTS)
# and gets the child's pid; it then talks to the child through the pipes exactly as
# subprocess.run did. "kill PID" kills a child that ran out of time. The zygote reaps its
# children as it goes, and only kills a pid that is its own unreaped child.
ZYGOTE = (
    "RUNNER = "
    + repr(RUNNER)
    + r'''
import json, os, signal, socket, sys, traceback


def preload(modules):
    # The same sys.path as RUNNER's while importing, but left as python -c made it: RUNNER, run
    # in the child, inserts the folder itself, as it does in a fresh process.
    sys.path.insert(0, os.environ["CH13_SELFCHECK_LIB"])
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # before numba's first import, as RUNNER
    for name, fromlist in modules:  # `import name` or `from name import *fromlist`, as the cell does
        try:
            __import__(name, fromlist=fromlist)
        except Exception:
            pass  # the cell's own import raises it again, where a student would see it
    sys.path.pop(0)


def serve(channel):
    """Fork a child per request. Returns True in a child (fds 0-2 are now the entry's pipes)."""
    live = set()
    channel.send(str(len(os.listdir("/proc/self/task"))).encode())
    while True:
        msg, fds, _, _ = socket.recv_fds(channel, 64, 3)
        for pid in list(live):
            if os.waitpid(pid, os.WNOHANG)[0]:
                live.discard(pid)
        if not msg:
            return False  # the measure is done
        if msg.startswith(b"kill "):
            if int(msg[5:]) in live:
                os.kill(int(msg[5:]), signal.SIGKILL)
            channel.send(b"ok")
            continue
        pid = os.fork()
        if pid == 0:
            channel.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            if "numpy.random" in sys.modules:
                sys.modules["numpy.random"].seed()  # fresh entropy, as in a fresh process
            return True
        for fd in fds:
            os.close(fd)
        live.add(pid)
        channel.send(str(pid).encode())


preload(json.loads(os.environ.pop("CH13_SELFCHECK_PRELOAD")))
if serve(socket.socket(fileno=int(os.environ.pop("CH13_SELFCHECK_ZYGOTE_FD")))):
    del preload, serve
    try:
        exec(compile(RUNNER, "<string>", "exec"), globals())
    except Exception as e:
        # what `python -c RUNNER` prints for an uncaught error: the traceback from RUNNER down
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        sys.exit(1)
'''
)


@dataclasses.dataclass
class Outcome:
    grade_id: str
    name: str
    flagged: bool
    why: str = ""
    error: str = ""

    @property
    def right(self) -> bool:
        return self.name.startswith("right_")


def notebook_of(grade_id: str) -> str:
    for path in sorted(glob.glob(os.path.join(SOURCE, "*.ipynb"))):
        if grade_id in answer_cells(nbformat.read(path, as_version=4)):
            return path
    raise KeyError(grade_id)


def cells_for(grade_id: str, answer: str) -> list[tuple[str, str]]:
    """(kind, source) of the cells a student runs to self-check ``answer``: setup, answer, check."""
    nb = nbformat.read(notebook_of(grade_id), as_version=4)
    answers = answer_cells(nb)
    tests = set(map(id, hidden_test_cells(nb).values()))
    refs = reference_solutions()
    out, seen_answer, after_other = [], False, False
    for cell in nb.cells:
        if cell.cell_type != "code" or id(cell) in tests:
            continue
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell in answers.values():
            if seen_answer:
                break  # the next exercise: its checks are not ours
            if gid == grade_id:
                out.append(("answer", answer))
                seen_answer, after_other = True, False
            else:
                out.append(("setup", refs[gid]))
                after_other = True
            continue
        if after_other:
            # an earlier exercise's self-check: its outcome is not this answer's, and some start
            # real worlds (a few CPU-seconds per entry); a cell the later ones need would show up as
            # a setup cell that raised (tests/test_selfchecks.py allows none)
            continue
        out.append(("check" if seen_answer else "setup", cell.source))
    return out


def _env() -> dict:
    env = dict(os.environ, **STEADY_ENV, CH13_SELFCHECK_LIB=SOURCE, PYTHONPATH=SOURCE)
    env.pop("CH13_GRADING", None)
    return env


# Heavy modules that ch13lib helpers the cells import load lazily, on first use, in every entry of
# their notebook: preloaded with them. (All import single-threaded under OMP_NUM_THREADS=1.)
LAZY_IMPORTS = {
    # the first picture draws with matplotlib and shows with IPython
    "ch13lib.pictures": ("matplotlib.figure", "matplotlib.patches", "IPython.display"),
    # the first optimizer step, and FSDP's state dicts, import torch._dynamo (and sympy with it)
    "ch13lib.parallel_checks": ("torch._dynamo",),
    "ch13lib.fsdp_ckpt": ("torch._dynamo",),
}


# CPython 3.11's AST constructor keeps one recursion count per interpreter, not per thread: two
# threads parsing at once can fail with "SystemError: AST constructor recursion depth mismatch"
# (python/cpython#106905). measure() starts each notebook's zygote from a pool thread.
_PARSING = threading.Lock()


@functools.cache
def preloads(notebook: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The imports at the top level of the notebook's code cells, in order (hidden tests left
    out), as ``__import__`` arguments (module, fromlist): what the cells before every entry's
    answer import anyway, and answer cells mostly import too."""
    nb = nbformat.read(notebook, as_version=4)
    tests = set(map(id, hidden_test_cells(nb).values()))
    found: dict[tuple, None] = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or id(cell) in tests:
            continue
        try:
            with _PARSING:
                body = ast.parse(cell.source).body
        except SyntaxError:
            continue
        for node in body:
            if isinstance(node, ast.Import):
                found.update(dict.fromkeys((alias.name, ()) for alias in node.names))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found[(node.module, tuple(alias.name for alias in node.names))] = None
    for module, _ in list(found):
        found.update(dict.fromkeys((lazy, ()) for lazy in LAZY_IMPORTS.get(module, ())))
    return tuple(found)


class ZygoteGone(Exception):
    pass


class Zygote:
    """The measure's side of a ZYGOTE process: fork() gives a child's pid and pipes."""

    def __init__(self, notebook: str) -> None:
        ours, theirs = socket.socketpair()
        env = dict(
            _env(),
            CH13_SELFCHECK_ZYGOTE_FD=str(theirs.fileno()),
            CH13_SELFCHECK_PRELOAD=json.dumps(preloads(notebook)),
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=SOURCE,
            env=env,
            pass_fds=[theirs.fileno()],
        )
        theirs.close()
        self.channel, self.lock = ours, threading.Lock()
        ours.settimeout(TIMEOUT_S)
        try:
            self.ok = ours.recv(64) == b"1"  # single-threaded after the imports: safe to fork
        except OSError:  # the imports hang: its entries run in fresh processes
            self.ok = False
        ours.settimeout(None)

    def _ask(self, message: bytes, fds=()) -> bytes:
        with self.lock:
            socket.send_fds(self.channel, [message], list(fds))
            return self.channel.recv(64)

    def fork(self) -> tuple[int, int, int, int]:
        """A fresh child running RUNNER: its pid and our ends of its stdin, stdout, stderr."""
        (in_r, in_w), (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe(), os.pipe()
        try:
            pid = int(self._ask(b"fork", (in_r, out_w, err_w)))
        except (OSError, ValueError):  # it died: an empty answer, or a broken socket
            for fd in (in_w, out_r, err_r):
                os.close(fd)
            raise ZygoteGone from None
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        return pid, in_w, out_r, err_r

    def kill(self, pid: int) -> None:
        try:
            self._ask(f"kill {pid}".encode())
        except OSError:
            pass  # the zygote is gone, and its children with their pipes were killed or ended

    def close(self) -> None:
        self.channel.close()  # the zygote reads EOF and exits
        self.proc.wait()


def _communicate(data: bytes, stdin: int, stdout: int, stderr: int, timeout: float) -> tuple[str, str] | None:
    """subprocess.run(input=data, capture_output=True, text=True, timeout=timeout) on a forked
    child's pipes: write stdin, read stdout and stderr to EOF. None when the time ran out.
    Closes the three fds."""
    deadline = time.monotonic() + timeout
    got: dict[int, list[bytes]] = {stdout: [], stderr: []}
    os.set_blocking(stdin, False)
    with selectors.DefaultSelector() as sel:
        sel.register(stdin, selectors.EVENT_WRITE)
        sel.register(stdout, selectors.EVENT_READ)
        sel.register(stderr, selectors.EVENT_READ)
        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                for key, _ in sel.select(left):
                    fd = key.fd
                    if fd == stdin:
                        try:
                            data = data[os.write(fd, data[:65536]) :]
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            data = b""
                        if not data:
                            sel.unregister(fd)
                            os.close(fd)
                    elif chunk := os.read(fd, 65536):
                        got[fd].append(chunk)
                    else:
                        sel.unregister(fd)
                        os.close(fd)
        finally:
            for fd in list(sel.get_map()):
                sel.unregister(fd)
                os.close(fd)

    def text(chunks):  # as text=True decodes: the locale's encoding, universal newlines
        return b"".join(chunks).decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")

    return text(got[stdout]), text(got[stderr])


def _forked(zygote: Zygote, cells: str) -> tuple[str, str] | None:
    """(stdout, stderr) of RUNNER on ``cells`` in a child forked by ``zygote``; None on a timeout."""
    pid, *fds = zygote.fork()
    out = _communicate(cells.encode(locale.getpreferredencoding(False)), *fds, TIMEOUT_S)
    if out is None:
        zygote.kill(pid)
    return out


def _fresh(cells: str) -> tuple[str, str] | None:
    """(stdout, stderr) of RUNNER on ``cells`` in a new ``python -c RUNNER``; None on a timeout."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", RUNNER],
            input=cells,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=SOURCE,
            env=_env(),
        )
    except subprocess.TimeoutExpired:
        return None
    return proc.stdout, proc.stderr


def run_entry(entry: catalogue.Entry, zygote: Zygote | None = None) -> Outcome:
    """Run one entry's cells in a fresh process: forked from ``zygote`` where it can fork, else a
    new ``python -c RUNNER`` (the same outcome, slower)."""
    grade_id, name, answer = entry.grade_id, entry.name, entry.source
    cells = json.dumps(cells_for(grade_id, answer))
    try:
        out = _forked(zygote, cells) if zygote and zygote.ok else _fresh(cells)
    except ZygoteGone:
        out = _fresh(cells)
    if out is None:
        data = {"flagged": True, "why": f"the self-check did not finish in {TIMEOUT_S} s"}
    else:
        stdout, stderr = out
        last = [line for line in stdout.splitlines() if line.startswith("{")][-1:]
        data = json.loads(last[0]) if last else {"error": (stderr or "no output")[-500:]}
    return Outcome(grade_id, name, bool(data.get("flagged")), data.get("why", ""), data.get("error", ""))


def measure(grade_ids: list[str] | None = None, jobs: int = 2, entries: list | None = None) -> list[Outcome]:
    """Each catalogue entry (of ``grade_ids``, or ``entries`` as given) through its notebook's self-check."""
    todo = entries if entries is not None else catalogue.entries()
    todo = [e for e in todo if not grade_ids or e.grade_id in grade_ids]
    zygotes: dict[str, Zygote] = {}
    locks: dict[str, threading.Lock] = {}
    guard = threading.Lock()

    def run(entry):
        notebook = notebook_of(entry.grade_id)
        with guard:
            lock = locks.setdefault(notebook, threading.Lock())
        with lock:  # one zygote per notebook, started by the first of its entries to run
            if notebook not in zygotes:
                zygotes[notebook] = Zygote(notebook)
        return run_entry(entry, zygotes[notebook])

    try:
        with ThreadPoolExecutor(jobs) as pool:
            return list(pool.map(run, todo))
    finally:
        for zygote in zygotes.values():
            zygote.close()


def table(outcomes: list[Outcome], markdown: bool = False) -> str:
    rows = []
    for gid in sorted({o.grade_id for o in outcomes}):
        mine = [o for o in outcomes if o.grade_id == gid]
        wrong = [o for o in mine if not o.right]
        caught = sum(o.flagged for o in wrong)
        alarms = [o.name for o in mine if o.right and o.flagged]
        missed = [o.name for o in wrong if not o.flagged]
        share = caught / len(wrong) if wrong else 1.0
        rows.append(
            (
                gid,
                f"{caught} of {len(wrong)}",
                f"{share:.0%}",
                ", ".join(alarms) or "none",
                ", ".join(m.removeprefix("wrong_") for m in missed) or "—",
            )
        )
    head = ("grade_id", "wrong answers flagged", "share", "false alarms", "wrong answers it passes")
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines = ["  ".join(head)] + ["  ".join(r) for r in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kit.selfchecks")
    ap.add_argument("grade_ids", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    outcomes = measure(args.grade_ids, args.jobs)
    for o in outcomes:
        if o.error:
            print(f"!! {o.grade_id}/{o.name}: {o.error}", file=sys.stderr)
    print(table(outcomes, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
