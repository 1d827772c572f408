"""Notebooks 03 and 07's real worlds, the grading side: the subject (kit/subject.py) starts a real
``torch.distributed`` world on the answer cell (:func:`launch_cell`, with ch13lib.collective_launch's
``launch``, the self-check's launcher), its ranks forked from a zygote the subject handed its guards
to (:func:`subject_setup`).

The boundary: a rank of a grading world runs only a function the subject handed over
(``kit.subject.Trusted.ranks``: the ``RANK_API`` entries of its harness modules), looked up by its
exact ``module:function`` name, under the subject's guards (``Trusted.guard``); anything else it
refuses (``ch13lib.collective_launch._worker``). Both reach a rank only through the zygote's and the
rank's frames, never a module attribute the cell could rebind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

from ch13lib.collective_launch import _worker, launch

# What the hidden graders may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("launch_cell",)
# The zygote's socket and the stream of its answers, set by subject_setup in a subject (ranks then
# start by fork, guarded). One dict, changed in place: the subject's tamper check counts any
# rebinding of this module's attributes as the cell's.
_ZYGOTE: dict = {"socket": None, "answers": None}


def launch_cell(cell, world_size: int, target: str, payload: dict, *, backend: str = "gloo") -> list[dict]:
    """Subject side: :func:`launch` a world whose ranks run ``target`` on the answer cell.

    ``cell`` is the subject's answer cell (its source and grade_id go to the workers as
    ``payload["source"]`` and ``payload["name"]``); ``target`` must be a ``RANK_API`` function of
    a harness module of the subject (``Trusted.ranks``: anything else, a rank refuses). Every
    worker is forked from the zygote (:func:`subject_setup`), installs the guards the subject
    handed over before the cell runs there (the audit hook, and the snapshot of the harness that
    the subject compares after each request) and adds to its report what the cell was refused
    (``"refused"``) and what of the harness it replaced (``"tampered"``); a worker with no guard
    handed over (outside a subject, or the zygote gone) runs nothing and reports why.
    Returns what :func:`launch` returns, plain data for the grader to judge.
    """
    if not (isinstance(target, str) and target.startswith(("ch13lib.", "kit.harnesses.")) and ":" in target):
        raise ValueError(f"not a harness launch target: {target!r}")
    payload = dict(payload, source=cell.source, name=cell.grade_id)
    return launch(world_size, target, payload, backend=backend, audit=True, start=_forked_ranks)


# Each rank of a world used to be ``python -m ch13lib.collective_launch``: a fresh interpreter that
# imports torch again (about 1.2 CPU-seconds; three ranks per world, one world per graded cell,
# the largest single cost of grading notebooks 03 and 07). In a subject, ranks are forked instead
# from a zygote: a copy of the subject made before the answer cell is loaded or the audit hook is
# installed, so it holds torch and the harness and nothing of the student's. It runs the same
# ``_worker`` a launched rank runs, with the guards the subject handed over. One world at a time, as
# the subject asks.


def subject_setup(trusted) -> None:
    """Called by the subject (kit/subject.py) after it imported the harness and before any student
    code runs: fork the zygote that the ranks of every later world are forked from. ``trusted`` is
    what the subject hands over (kit.subject.Trusted); its ``guard`` and ``ranks`` (the entries a
    rank may run) go to the zygote only, as arguments, so nothing in this process's modules holds
    them for the cell to rebind."""
    import torch.distributed  # noqa: F401 - imported once, here, for every rank

    ours, theirs = socket.socketpair()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        ours.close()
        _zygote_loop(theirs, trusted.guard, trusted.ranks)
    theirs.close()
    _ZYGOTE.update(socket=ours, answers=ours.makefile("rb"))


def _zygote_loop(ctl: socket.socket, guard, entries) -> None:
    """The zygote: for each request ``{"tmp", "envs"}`` fork one rank per env, answer their pids,
    then each rank's exit code as it ends. Ends (never returns) when the subject closes the socket.
    ``guard`` (the subject's, kit.subject.guard) and ``entries`` (``Trusted.ranks``) stay in this
    frame's locals and each rank's: the zygote never runs student code, and a rank's cell can rebind
    module attributes, not a frame's variables."""
    code = 0
    try:
        keep = ctl.fileno()
        os.closerange(3, keep)  # the subject's channel to the judge above all: its end must be its own
        os.closerange(keep + 1, 1 << 16)
        lines = ctl.makefile("rb")
        for line in lines:
            request = json.loads(line)
            ranks = {}
            for r, env in enumerate(request["envs"]):
                pid = os.fork()
                if pid == 0:
                    lines.close()
                    ctl.close()
                    _forked_worker(request["tmp"], r, env, guard, entries)
                ranks[pid] = r
            ctl.sendall(json.dumps({"pids": list(ranks)}).encode() + b"\n")
            while ranks:
                pid, status = os.waitpid(-1, 0)
                if pid in ranks:
                    exit = {"rank": ranks.pop(pid), "code": os.waitstatus_to_exitcode(status)}
                    ctl.sendall(json.dumps(exit).encode() + b"\n")
    except BaseException:  # noqa: BLE001 - the subject sees the socket close and starts ranks itself
        code = 1
    os._exit(code)


def _forked_worker(tmp: str, rank: int, env: dict, guard, entries) -> None:
    """In a rank forked by the zygote: become what ``python -m ch13lib.collective_launch TMP`` is,
    with the subject's ``guard`` and ``entries`` in hand."""
    code = 1
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(tmp)
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(os.path.join(tmp, f"rank{rank}.log"), os.O_WRONLY | os.O_APPEND)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        code = _worker(tmp, guard, entries)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _ForkedRank:
    """A rank forked by the zygote, with the part of subprocess.Popen that ``launch`` uses."""

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode, self.done = pid, None, threading.Event()

    def wait(self, timeout: float | None = None) -> int | None:
        if not self.done.wait(timeout):
            raise subprocess.TimeoutExpired(f"rank {self.pid}", timeout)
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        if not self.done.is_set():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


def _forked_ranks(tmp: str, envs: list[dict]) -> list[_ForkedRank] | None:
    """The world's ranks forked by the zygote (``launch``'s ``start``); None where there is none
    (outside a subject) or it is gone, and ``launch`` then starts no guarded rank."""
    zygote, answers = _ZYGOTE["socket"], _ZYGOTE["answers"]
    if zygote is None:
        return None
    try:
        zygote.sendall(json.dumps({"tmp": tmp, "envs": envs}).encode() + b"\n")
        ranks = [_ForkedRank(pid) for pid in json.loads(answers.readline())["pids"]]
    except (OSError, ValueError, KeyError, TypeError):
        _ZYGOTE.update(socket=None, answers=None)
        return None

    def exits():
        left = set(range(len(ranks)))
        try:
            while left:
                item = json.loads(answers.readline())
                ranks[item["rank"]].returncode = item["code"]
                ranks[item["rank"]].done.set()
                left.discard(item["rank"])
        except (OSError, ValueError, KeyError, TypeError, IndexError):  # the zygote died: so did its ranks
            for r in left:
                ranks[r].returncode = -signal.SIGKILL
                ranks[r].done.set()

    threading.Thread(target=exits, daemon=True).start()
    return ranks
