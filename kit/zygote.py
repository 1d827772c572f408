"""What the two zygotes (kit/judges.py, kit/subjects.py) share: a request over a socketpair, a
child forked for it, and its pid and then its exit status sent back on a socket of its own.

Both sides of the protocol are here. The caller sends a request with :func:`ask` (a JSON message,
and descriptors with ``SCM_RIGHTS``, the first of them the answer socket); the zygote forks with
:meth:`Children.fork` and reports with :meth:`Children.reap`; the caller waits with
:func:`wait_exit`. SOCK_SEQPACKET keeps each message whole, so no framing is needed.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys

MAX_MESSAGE = 1 << 20


def socketpair() -> tuple[socket.socket, socket.socket]:
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)


def ask(ctl: socket.socket, request: dict, fds: list[int]) -> tuple[int, socket.socket] | None:
    """Send ``request`` with ``fds`` and a fresh answer socket; (the child's pid, our end of that
    socket), or None when the zygote is gone or said no (then the caller execs instead)."""
    ours, theirs = socketpair()
    try:
        socket.send_fds(ctl, [json.dumps(request).encode()], [theirs.fileno(), *fds])
        theirs.close()
        return int(json.loads(ours.recv(MAX_MESSAGE))["pid"]), ours  # an empty answer: no
    except (OSError, ValueError, KeyError, TypeError):
        theirs.close()
        ours.close()
        return None


def wait_exit(answers: socket.socket, pid: int, timeout: float | None) -> int | None:
    """The child's exit status (as Popen.returncode) once the zygote reports it; None when the
    zygote died first and so cannot. Raises subprocess.TimeoutExpired."""
    answers.settimeout(timeout)
    try:
        got = answers.recv(MAX_MESSAGE)
    except TimeoutError:
        raise subprocess.TimeoutExpired(f"process {pid}", timeout) from None
    try:
        return int(json.loads(got)["code"])
    except (ValueError, KeyError, TypeError):
        return None


def single_threaded() -> bool:
    return len(os.listdir("/proc/self/task")) == 1  # fork copies one thread: no lock held by another


class Children:
    """The zygote's side: the children it forked, each with the socket its caller waits on."""

    def __init__(self) -> None:
        self.running: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, answers)

    def fork(self, answers: socket.socket, child) -> int | None:
        """Fork; the child runs ``child()``, which must never return (it ends with os._exit).
        The child's pid, or None when not forked (the caller execs instead)."""
        if not single_threaded():
            answers.close()
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child()
            os._exit(1)  # not reached
        answers.send(json.dumps({"pid": pid}).encode())
        self.running[os.pidfd_open(pid)] = (pid, answers)
        return pid

    def reap(self, pidfd: int) -> None:
        """The child behind ``pidfd`` ended: send its status to its caller."""
        pid, answers = self.running.pop(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        try:
            answers.send(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode())
        except OSError:
            pass  # the caller is gone
        answers.close()

    def next_request(self, ctl: socket.socket, max_fds: int, idle: bool = False):
        """Reap the children that ended, then (message, descriptors) of the next request; None when
        ``idle`` and nothing came (the zygote then does some work of its own). Exits when every
        holder of ``ctl`` closed it."""
        while True:
            ready, _, _ = select.select([ctl, *self.running], [], [], 0 if idle else None)
            for pidfd in [r for r in ready if r in self.running]:
                self.reap(pidfd)
            if ctl in ready:
                message, fds, _, _ = socket.recv_fds(ctl, MAX_MESSAGE, max_fds)
                if not message:
                    os._exit(0)  # its callers are gone; children still running finish on their own
                return json.loads(message), fds
            if idle and not ready:
                return None
