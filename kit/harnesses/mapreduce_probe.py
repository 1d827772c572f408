"""Notebook 04's grading side (word-count MapReduce on Ray): what the hidden ``word_count`` grader
runs on the answer cell in the grading subject (kit/subject.py), reported as raw observations in
plain data (graders/word_count.py asks, and judges).

The probes, their faults and barrier, and the one Ray cluster of a subject process are
ch13lib.mapreduce_probe's, the same the notebook's self-check runs; this module calls the cell's
functions with them and runs ``partition`` afresh under other hash seeds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from ch13lib import mapreduce as lib
from ch13lib import mapreduce_probe as probe
from ch13lib.mapreduce_probe import _counts, _module, _observed, _started, _warm, shown

# What the hidden grader may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = (
    "map_pairs",
    "reduce_once",
    "partition_table",
    "partition_elsewhere",
    "run_probed",
    "run_own",
    "live_actor_ids",
    "stop",
)

# Imported once ch13lib.mapreduce_probe has set Ray's environment (some of it is read at import),
# and by name here: a subject with this harness forks from the zygote that holds Ray (kit/subjects.py
# ``worth_forking`` reads a harness's own imports).
import ray  # noqa: E402


def map_pairs(cell, record):
    """``list(map_fn(record))``: each item a tuple of shown values when it is a tuple, else shown."""
    _warm()
    return [tuple(shown(v) for v in p) if isinstance(p, tuple) else shown(p) for p in cell.module.map_fn(record)]


def reduce_once(cell, key, values):
    """``reduce_fn(key, iter(values))`` (an iterator: no len(), one pass), shown."""
    _warm()
    got = cell.module.reduce_fn(key, iter(values))
    return tuple(shown(v) for v in got) if isinstance(got, tuple) else shown(got)


def partition_table(cell, keys, ns, repeat: int = 1):
    """``[[partition(k, n) for n in ns] for k in keys]``, computed ``repeat`` times, shown."""
    _warm()
    partition = cell.module.partition
    return [[[shown(partition(k, n)) for n in ns] for k in keys] for _ in range(repeat)]


# Outside grading (no guard handed over: a test, a student's own call), the fresh process runs the
# cell as it is, and answers as the subject's guarded child does (kit/subject.py ``child``). In the
# grading sandbox it runs nothing: there the cell runs only under the guards the subject hands over.
_PARTITION_CHILD = r"""
import json, os, sys
channel = os.fdopen(os.dup(1), "w")        # the answer goes here; the cell's prints go to stderr
os.dup2(2, 1)
request, lib = json.loads(sys.argv[1]), sys.argv[2]
source = sys.stdin.read()
sys.path.append(lib)                       # ch13lib, from where the caller imported it
from ch13lib import cell
if cell.sandboxed():
    answer = {"error": cell.unguarded()}
else:
    module = cell.load(source, request["grade_id"], "child", register=False)
    keys, ns = request["args"]
    answer = {"ok": [[module.partition(k, n) for n in ns] for k in keys]}
channel.write(json.dumps(answer) + "\n")
channel.flush()
"""


_PARTITION_CALL = "kit.harnesses.mapreduce:partition_rows"  # light: the child imports neither Ray nor this module
_LIB_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(probe.__file__)))  # the folder that holds ch13lib
_trusted = None  # what the grading subject hands over (kit.subject.Trusted): set by subject_setup


def subject_setup(trusted) -> None:
    """Called by the grading subject before any student code runs: keep what it hands over, whose
    ``child`` starts a fresh interpreter that runs the cell under the subject's guards. Rebinding
    this attribute is tampering to the subject; where none was handed over and this process is in
    the grading sandbox, the fresh process runs nothing."""
    global _trusted
    _trusted = trusted


def _environ() -> dict:
    """A copy of os.environ (Ray, starting in another thread, may be adding to it)."""
    for _ in range(100):
        try:
            return dict(os.environ)
        except RuntimeError:  # changed size during iteration
            continue
    return dict(os.environ)


def partition_elsewhere(cell, keys, ns, seeds, timeout_s: float = 120.0):
    """The cell run afresh in one new Python process per hash seed (``PYTHONHASHSEED=seed``,
    started side by side): each gives ``{"table": [[partition(k, n) for n in ns] for k in keys]}``
    or ``{"error": why}``, with ``"refused"`` and ``"tampered"``: what its guards saw (the subject's,
    handed over by :func:`subject_setup`; none outside grading)."""
    _warm()
    trusted = _trusted
    env = dict(trusted.env) if trusted is not None else _environ()  # the subject's, from before the cell ran
    env = {k: v for k, v in env.items() if not k.startswith("RAY_ADDRESS")}
    request = json.dumps({"grade_id": cell.grade_id, "call": _PARTITION_CALL, "args": [list(keys), list(ns)]})
    if trusted is not None:
        command = [*trusted.child, request]
    else:
        command = [sys.executable, "-c", _PARTITION_CHILD, request, _LIB_PARENT]
    procs = []
    for seed in seeds:
        procs.append(
            subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env, PYTHONHASHSEED=str(seed)),
                text=True,
            )
        )
    out = []
    for proc in procs:
        try:
            stdout, stderr = proc.communicate(cell.source, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            out.append({"error": f"it ran past {timeout_s:.0f} s", "refused": [], "tampered": []})
            continue
        lines = stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = stderr.strip().splitlines()[-1:] or ["(no message)"]
            out.append({"error": tail[0][:1000], "refused": [], "tampered": []})
            continue
        try:
            got = json.loads(lines[-1])
            seen = {k: [str(x) for x in got.get(k) or []] for k in ("refused", "tampered")}
            out.append(dict(seen, **({"table": got["ok"]} if "ok" in got else {"error": str(got["error"])[:1000]})))
        except (ValueError, TypeError, KeyError, AttributeError):
            out.append({"error": "its output was not the table the harness writes", "refused": [], "tampered": []})
    return out


# ---------------------------------------------------------------------------------------------
# run_mapreduce


def run_probed(
    cell, records, n_map, n_reduce, map_faults=None, reduce_faults=None, barrier_guard_s=None, value="one", catch=True
):
    """``run_mapreduce(records, map_probe, reduce_probe, n_map, n_reduce)`` with the scheduled
    faults (target -> (action, after)) and, when ``barrier_guard_s`` is given, a 2-party barrier.

    Returns ``{"result": what it returned (see _counts) or None, "error": {"type", "message"} or
    None, "calls": every probe call {kind, target, pid, task}, "driver_pid": this process,
    "fired": [kind, target] of the scheduled faults that fired, "barrier": the barrier's report
    {kind: (proven, tasks seen)} or None}``. With ``catch=False`` the cell's exception propagates.
    A NotImplementedError (the stub) always propagates."""
    module = _module(cell)
    return _observed(
        module.run_mapreduce,
        probe.Probe,
        records,
        n_map,
        n_reduce,
        map_faults,
        reduce_faults,
        barrier_guard_s,
        value,
        catch,
    )


def run_own(cell, records, n_map, n_reduce):
    """``run_mapreduce(records, map_fn, reduce_fn, n_map, n_reduce)`` with the cell's own map_fn
    and reduce_fn; what it returned (see _counts). Its exceptions propagate."""
    module = _module(cell)
    with lib.reaping():
        return _counts(module.run_mapreduce(list(records), module.map_fn, module.reduce_fn, n_map, n_reduce))


def live_actor_ids(cell):
    """The actors of this process's Ray job still alive (none after a reaped run)."""
    _started()
    return sorted(lib.live_actors()) if ray.is_initialized() else []


def _descendants() -> list[int]:
    """Every process descended from this one (Ray's GCS, raylet, agents and workers)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parent[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, frontier = [], [os.getpid()]
    while frontier:
        kids = [c for c, p in parent.items() if p == frontier[-1]]
        frontier.pop()
        out += kids
        frontier += kids
    return out


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def stop(cell, polls: int = 200):
    """End this process's Ray cluster at once and remove its folder: the last request of a
    grading (the subject exits next, and the judge kills whatever of its job is left).

    ray.shutdown() stops the processes gracefully, which takes seconds; killing only the processes
    Ray started leaves its workers alive long enough to write their logs into the folder again.
    So every process descended from this one is killed (SIGKILL), at once, and the folder is
    removed when they are gone (at most ``polls`` short polls)."""
    import signal
    import time

    _started()
    pids = _descendants()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for _ in range(polls):
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:  # reap our own children
                pass
        except ChildProcessError:
            pass
        if all(_gone(pid) for pid in pids):
            break
        time.sleep(0.01)
    if lib._temp_dir:
        shutil.rmtree(lib._temp_dir, ignore_errors=True)
    return len(pids)
