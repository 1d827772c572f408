"""Start a grading's judge (``python -m graders GRADE_ID ...``): forked from a warm zygote, or exec'd.

Before its first test a judge imports hypothesis and its grader, and half the graders import torch:
about 1.3 CPU-seconds, paid again by every cell of every student. The zygote is a process that has
imported them once and forks one judge per grading. Each judge is still a fresh process of its own
(its own session, environment, working directory, log and key), what exec'ing ``python -m graders``
gives, minus the imports. The zygote only ever runs trusted code: it imports graders, never loads a
student's cell, and forks before a judge reads anything of the submission.

One zygote per process that grades (an ``nbgrader autograde`` run, the tests), started by the first
grading or by :func:`warm` (which ``kit.external_grade.StartGrading`` calls before the kernel runs the
notebook, so the imports overlap the kernel), and ended when that process ends: its socket closes.
It serves the simulators' device only; GPU judges are exec'd (a grader module may read the device
when imported). As root it also starts the subjects' zygote (kit/subjects.py), whose socket every
judge inherits. ``c.Judges.launch = "exec"`` (kit/config.py; or ``CH13_JUDGE_LAUNCH=exec``) execs
every judge, and so every subject (for comparison, or where fork is unsafe).

Why not :mod:`multiprocessing`'s forkserver (as kit/launch.py uses for nbgrader): it has one
server per process with one preload list, started with the caller's environment; the judges need
their own (a fixed hash seed, one OpenMP thread, the CUDA simulator) and share a process with
kit/launch.py's server in the class runner and the tests.
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading

from kit import ROOT, STEADY_ENV, zygote

_lock = threading.Lock()
_ctl: socket.socket | None = None  # our end of the zygote's control socket; None: not started
_broken = False  # the zygote failed once: exec every judge from then on
_subjects: socket.socket | None = None  # our end of the subjects' zygote's socket (root only), for warm()
# -c rather than -m: a zygote's __main__ is in every process it forks, a subject's too
_JUDGES_ENTRY = "import sys, kit.judges; kit.judges._zygote(int(sys.argv[1]), int(sys.argv[2]))"
_SUBJECTS_ENTRY = "import sys, kit.subjects; kit.subjects.serve(int(sys.argv[1]), sys.argv[2].split(','))"


def _zygote_env(env: dict) -> dict:
    """The judges' environment, minus what is each job's own; plus the CUDA simulator, which
    graders/__main__.py turns on for a judge without ``--gpu`` (numba reads it once, at its import)."""
    base = {k: v for k, v in env.items() if k not in ("CH13_JOB", "TMPDIR")}
    return {**base, **STEADY_ENV, "NUMBA_ENABLE_CUDASIM": "1"}


def _subjects_env(env: dict) -> dict:
    """What a subject's interpreter starts with (kit/judge.py: Subject._env), minus the job's own."""
    from kit.judge import SOURCE_DIR

    return {**_zygote_env(env), "PYTHONPATH": os.pathsep.join([ROOT, SOURCE_DIR])}


def _connect(env: dict) -> socket.socket | None:
    """Our end of the judges' zygote's socket, both zygotes started at the first call."""
    global _ctl, _broken, _subjects
    with _lock:
        if _ctl is None and not _broken:
            ours, theirs = zygote.socketpair()
            pass_fds = [theirs.fileno()]
            subjects_fd = -1
            if os.geteuid() == 0:  # the subjects' zygote, for the sandbox's first tier (kit/subjects.py)
                from kit.grading import harness_modules

                mine, its = zygote.socketpair()
                try:
                    subprocess.Popen(
                        [sys.executable, "-c", _SUBJECTS_ENTRY, str(its.fileno()), ",".join(harness_modules())],
                        env=_subjects_env(env),
                        pass_fds=[its.fileno()],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                    subjects_fd = mine.fileno()
                    pass_fds.append(subjects_fd)
                    _subjects = mine  # kept for warm(); the judges' zygote gets its own copy
                except OSError:
                    mine.close()
                finally:
                    its.close()
            try:
                subprocess.Popen(
                    [sys.executable, "-c", _JUDGES_ENTRY, str(theirs.fileno()), str(subjects_fd)],
                    env=_zygote_env(env),
                    pass_fds=pass_fds,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    start_new_session=True,  # a TA's Ctrl-C in the terminal stops the caller, which ends us
                )
                _ctl = ours
            except OSError:
                _broken = True
                ours.close()
            finally:
                theirs.close()
        return _ctl


def share(env: dict) -> tuple | None:
    """Both zygotes' sockets (started now if need be, with ``env``: kit.grading.judge_env's),
    for processes this one starts to :func:`adopt`: the class runner's students then share one
    pair of zygotes instead of each importing the graders and harnesses again. None when judges
    are exec'd."""
    if not _enabled(False, None):
        return None
    ctl = _connect(env)
    return None if ctl is None else (ctl, _subjects)


def adopt(zygotes: tuple | None) -> None:
    """Use the zygotes :func:`share` gave (in a process started with them): requests from many
    processes are whole messages on one SOCK_SEQPACKET socket, each with its own answer socket."""
    global _ctl, _subjects
    if zygotes is not None:
        with _lock:
            _ctl, _subjects = zygotes


def end_student(token: str) -> None:
    """A student's autograde is over (or was killed): the shared zygote kills its judges still
    running. Their environment is the zygote's, so ``kit.jobs.kill_job`` cannot find them by
    ``CH13_JOB_STUDENT``; a zygote of the student's own process was found, and its judges with it."""
    with _lock:
        ctl = _ctl
    if ctl is not None and token:
        try:
            ctl.send(json.dumps({"end_student": token}).encode())
        except OSError:
            pass


def _enabled(gpu: bool, fork: bool | None) -> bool:
    """Fork this judge from the zygote? ``fork``: kit.config.Judges.launch == "fork", as the caller
    read it (None: Judges' default and CH13_JUDGE_LAUNCH). GPU judges are always exec'd."""
    if fork is None:
        from kit.config import Judges

        fork = Judges().launch == "fork"
    return not gpu and fork


def warm(grade_ids, env: dict, subjects: bool = False, fork: bool | None = None) -> None:
    """Have the judges' zygote import these graders now (it keeps serving meanwhile), and with
    ``subjects`` the subjects' zygote its harnesses."""
    if not _enabled(False, fork):
        return
    ctl = _connect(env)
    for sock, message in [(ctl, {"warm": sorted(grade_ids)}), (_subjects if subjects else None, {"warm": True})]:
        if sock is not None:
            try:
                sock.send(json.dumps(message).encode())
            except OSError:
                pass


PIDFD_SIGNAL_PROCESS_GROUP = 1 << 2  # linux/pidfd.h (Linux 6.9): the pidfd's process group


class Judge:
    """A running judge, with the part of subprocess.Popen that kit/grading.py uses. ``kill`` is
    aimed through a handle that cannot name another process: a pidfd (a forked judge, whose parent
    is the zygote) or a Popen that has not reaped its child (an exec'd one)."""

    def __init__(self, pid: int, wait, pidfd: int | None = None, popen: subprocess.Popen | None = None) -> None:
        self.pid, self._wait, self.returncode = pid, wait, None
        self._pidfd, self._popen = pidfd, popen

    def wait(self, timeout: float | None = None) -> int:
        """The exit status, as Popen.returncode; raises subprocess.TimeoutExpired."""
        if self.returncode is None:
            self.returncode = self._wait(timeout)
        return self.returncode

    def kill(self) -> None:
        """SIGKILL to the judge's process group (it leads its own session), never to a process
        that took its pid after it was reaped."""
        if self.returncode is not None:
            return  # waited for: the pid may be another process's by now
        if self._popen is not None:
            if self._popen.poll() is None:  # not reaped (only we reap it): the pid is still the judge's
                try:
                    os.killpg(self.pid, 9)
                except OSError:  # its group already empty: nothing to kill
                    pass
            return
        if self._pidfd is None:
            return  # the judge was gone before its pidfd could be opened
        try:
            signal.pidfd_send_signal(self._pidfd, 9, None, PIDFD_SIGNAL_PROCESS_GROUP)
        except OSError as e:
            if e.errno == errno.EINVAL:  # a kernel older than 6.9: the judge alone (it starts no process)
                try:
                    signal.pidfd_send_signal(self._pidfd, 9)
                except OSError:
                    pass
            # ESRCH: already exited and reaped by the zygote


def start(
    argv: list[str], *, env: dict, cwd: str, log: str, key: bytes, gpu: bool = False, fork: bool | None = None
) -> Judge:
    """Start ``python -m graders <argv>`` with ``env`` in ``cwd``, stdout and stderr appended to
    ``log``, reading ``key`` as its first line of input; forked from the judges' zygote unless
    ``fork`` is False (see :func:`_enabled`)."""
    if _enabled(gpu, fork):
        judge = _forked(argv, env, cwd, log, key)
        if judge is not None:
            return judge
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "graders", *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    proc.stdin.write(key + b"\n")
    proc.stdin.close()
    return Judge(proc.pid, lambda timeout: proc.wait(timeout), popen=proc)


def _forked(argv, env, cwd, log, key) -> Judge | None:
    global _broken
    ctl = _connect(env)
    asked = ctl and zygote.ask(ctl, {"argv": argv, "env": env, "cwd": cwd, "log": log, "key": key.decode()}, [])
    if not asked:
        with _lock:
            _broken = True  # and the caller execs this judge, and every later one
        return None
    pid, answers = asked
    try:
        pidfd = os.pidfd_open(pid)  # to wait for the judge itself should the zygote die first
    except OSError:
        pidfd = None  # already gone: its status is on the way

    def wait(timeout):
        code = zygote.wait_exit(answers, pid, timeout)
        if code is None:
            # The zygote died (killed: the judge is not its child any more). Wait for the judge
            # itself; its status is lost, and kit/grading.py then trusts only the results it wrote.
            if pidfd is not None and not select.select([pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"judge {pid}", timeout) from None
            code = 0
        answers.close()
        if pidfd is not None:
            os.close(pidfd)
        return code

    return Judge(pid, wait, pidfd=pidfd)


# --- The zygote -----------------------------------------------------------------------------------


def _zygote(fd: int, subjects_fd: int = -1) -> None:
    """Serve requests until the caller closes the socket: ``{"warm": [grade_id, ...]}`` imports
    graders (one between requests); a judge request forks one judge."""
    from kit.audit import seal_memory

    seal_memory()  # the requests carry the judges' keys: no process of our uid may read our memory
    ctl = socket.socket(fileno=fd)
    import graders.__main__  # noqa: F401 - hypothesis, the API, the screen
    from graders import load_grader

    todo: list[str] = []  # graders to import
    children = zygote.Children()
    students: dict[int, str] = {}  # judge pid -> the student whose autograde asked for it
    while True:
        got = children.next_request(ctl, max_fds=1, idle=bool(todo))
        if got is None:
            try:
                load_grader(todo.pop(0))
            except Exception:  # noqa: BLE001 - the judge meets the same error, and reports it
                pass
            continue
        request, fds = got
        if "warm" in request:
            todo += [g for g in request["warm"] if f"graders.{g}" not in sys.modules and g not in todo]
        if "end_student" in request:  # its autograde is over (or was killed): so are its judges
            running = {pid for pid, _ in children.running.values()}  # not reaped: no pid reused
            for pid in [p for p, who in students.items() if p not in running or who == request["end_student"]]:
                if pid in running:
                    # its session once the judge has called setsid; the judge itself before that (a
                    # loaded machine had not yet run the child: killpg alone found no group)
                    for kill in (os.killpg, os.kill):
                        try:
                            kill(pid, 9)
                        except OSError:
                            pass
                del students[pid]
        if len(fds) == 1:
            pid = children.fork(socket.socket(fileno=fds[0]), lambda: _judge(request, subjects_fd))
            student = request.get("env", {}).get("CH13_JOB_STUDENT")
            if pid and student:
                students[pid] = student
            # A grader no one warmed (the tests' collector, a bench, grade_cell called alone): this
            # judge imports it itself, and the zygote too once idle, so the next ones need not
            # (torch: ~1.5 CPU-s a judge, a quarter of the catalogue's grading).
            gid = (request.get("argv") or [None])[0]
            if type(gid) is str and f"graders.{gid}" not in sys.modules and gid not in todo:
                todo.append(gid)
        else:
            for x in fds:
                os.close(x)


def _judge(request: dict, subjects_fd: int) -> None:
    """In the forked child: become ``python -m graders <argv>``. Never returns."""
    code = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        from kit import subjects

        if subjects_fd >= 0:  # the subjects' zygote: our subjects are forked, not exec'd
            os.dup2(subjects_fd, subjects.CHANNEL_FD)
            subjects.channel = socket.socket(fileno=subjects.CHANNEL_FD)
        # the control socket and the other judges' answer sockets
        os.closerange(subjects.CHANNEL_FD + 1 if subjects_fd >= 0 else 3, 1 << 16)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile

        tempfile.tempdir = None  # found again from TMPDIR: the job's own folder
        from graders.__main__ import run

        code = run(request["argv"], key=request["key"].encode())
    except BaseException:  # noqa: BLE001 - in the log, as python -m would print it
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
