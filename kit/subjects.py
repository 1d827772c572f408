"""Subjects forked from a warm zygote: each cell still gets a fresh sandbox, without importing torch.

A subject imports its harness before the cell loads, and for half the cells that is torch: about
1.2 CPU-seconds of a grading, paid again every time a subject restarts. The subjects' zygote is a
process that imported kit.sandbox, kit.subject and the harnesses (trusted code only: it never
loads a cell, and never reads a job's request) and forks one child per subject. The child reads
its job's request from a pipe the zygote never reads, and then does what ``python -m kit.sandbox
... -- python -c 'kit.subject.run(...)'`` does: its own namespaces, file system, uid, limits and
seal (kit.sandbox.main), and the subject's loop (kit.subject.run), in the same process instead of
an exec.

Only as root (the sandbox's first tier), where every process of a job is found by its uid: a
forked process carries its zygote's command line and environment, not the job's ``CH13_JOB`` tag,
which the other tiers find a job by. Only for the simulators' device, as for the judges.

The grading process starts this zygote beside the judges' (kit/judges.py) and hands the judges'
zygote one end of its socket, which every judge inherits: a judge sends a start request with the
descriptors of its subject (its channel's pipes, its log, the pipe holding the request, and a
socket for the answers: the pid, then the exit status).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys

from kit import zygote

ENTRY = "import sys, kit.subject; kit.subject.run(sys.argv[1:])"  # the subject's command (kit/judge.py)
CHANNEL_FD = 3  # where a forked judge finds its end of the zygote's socket

channel: socket.socket | None = None  # in a judge forked by kit/judges.py: the zygote's socket


def usable(sandbox: bool, gpu: bool, harness: list[str]) -> bool:
    return channel is not None and sandbox and not gpu and os.geteuid() == 0 and worth_forking(harness)


_HEAVY = re.compile(r"^(?:import|from) (?:torch|ray)\b", re.M)
_heavy: dict[str, bool] = {}


def worth_forking(harness: list[str]) -> bool:
    """Whether a subject with this harness imports torch or Ray (read from the harness's source):
    those fork from the zygote; the others start as fast exec'd (kit.subject and a light harness),
    and a notebook without them never makes the zygote import anything."""
    from kit.judge import ROOT, SOURCE_DIR

    for name in harness:
        if name not in _heavy:
            home = ROOT if name.startswith("kit.") else SOURCE_DIR  # kit/harnesses/, or ch13lib
            path = os.path.join(home, *name.split(".")) + ".py"
            try:
                with open(path, encoding="utf-8") as f:
                    _heavy[name] = bool(_HEAVY.search(f.read()))
            except OSError:
                _heavy[name] = False
        if _heavy[name]:
            return True
    return False


class ForkedSubject:
    """A subject forked by the zygote, with the part of subprocess.Popen that kit/judge.py uses."""

    def __init__(self, pid: int, stdin, stdout, answers: socket.socket) -> None:
        self.pid, self.stdin, self.stdout, self._answers = pid, stdin, stdout, answers
        self.returncode: int | None = None
        try:  # signalled through this, never by a number the zygote may have reaped and the kernel reused
            self._pidfd: int | None = os.pidfd_open(pid)
        except OSError:
            self._pidfd = None  # already gone

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = zygote.wait_exit(self._answers, self.pid, timeout)
            self.returncode = -9 if code is None else code  # None: the zygote died; the judge stops it by its uid
            self._answers.close()
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
        return self.returncode

    def kill(self) -> None:
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass


def start(sandbox_argv: list[str], *, env: dict, cwd: str, log_path: str, harness: list[str]) -> ForkedSubject | None:
    """Fork ``python -m kit.sandbox <sandbox_argv>`` (whose command is the subject's) from the zygote;
    None when it cannot (gone, or it said no), and the caller execs it."""
    global channel
    to_child, stdin_w = os.pipe()
    stdout_r, from_child = os.pipe()
    setup_r, setup_w = os.pipe()
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    given = [to_child, from_child, log, setup_r]
    asked = zygote.ask(channel, {"harness": harness}, given)
    for fd in given:
        os.close(fd)
    if asked is None:
        for fd in (stdin_w, stdout_r, setup_w):
            os.close(fd)
        channel = None  # exec from now on
        return None
    pid, answers = asked
    with open(setup_w, "w", encoding="utf-8") as f:  # read by the child alone, never by the zygote
        json.dump({"argv": sandbox_argv, "env": env, "cwd": cwd}, f)
    return ForkedSubject(pid, open(stdin_w, "wb"), open(stdout_r, "rb"), answers)


# --- The zygote -----------------------------------------------------------------------------------


def serve(fd: int, harness: list[str]) -> None:
    """Until every holder of the socket closed it: at ``{"warm": true}`` or the first start request,
    import every harness of ``harness`` (so every subject it forks holds the same modules, whatever
    it graded before); for each start request, with its five descriptors, fork one subject."""
    import importlib

    import kit.sandbox  # noqa: F401 - what every child runs first
    import kit.subject  # noqa: F401

    def load(name: str) -> None:
        try:
            importlib.import_module(name)  # trusted: ch13lib's and kit/harnesses/' harnesses
        except Exception:  # noqa: BLE001 - the child meets the same error, and reports it
            pass

    loaded = False
    ctl = socket.socket(fileno=fd)
    children = zygote.Children()
    while True:
        request, fds = children.next_request(ctl, max_fds=5)
        if not loaded:
            for name in harness:
                load(name)
            loaded = True
        if len(fds) != 5:
            for x in fds:
                os.close(x)
            continue
        for name in request["harness"]:
            load(name)
        children.fork(socket.socket(fileno=fds[0]), lambda: _subject(fds[1:]))
        for x in fds[1:]:
            os.close(x)


def _subject(fds: list[int]) -> None:
    """In the forked child: become ``python -m kit.sandbox ARGV``. Never returns."""
    code = 1
    try:
        stdin, stdout, log, setup = fds
        with open(setup, encoding="utf-8") as f:
            request = json.load(f)
        os.setsid()  # its own session, as start_new_session gave
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(log, 2)
        os.closerange(3, 1 << 16)  # the zygote's socket and every other job's descriptors
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile

        tempfile.tempdir = None  # found again from TMPDIR
        from kit.sandbox import main

        main(request["argv"], run=_run)
    except BaseException:  # noqa: BLE001 - in the job's log, as an exec'd sandbox would print it
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _run(cmd: list[str]) -> None:
    """kit.sandbox's last step, inside the sandbox: the subject's loop in this process (its
    harness already imported), any other command exec'd as usual."""
    if cmd[:3] != [sys.executable, "-c", ENTRY]:
        os.execvp(cmd[0], cmd)
    import tempfile

    import kit.subject

    tempfile.tempdir = None  # the sandbox's private TMPDIR, not the one it made its folders in
    sys.argv = ["-c", *cmd[3:]]
    kit.subject.run(cmd[3:])  # never returns
