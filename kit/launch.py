"""Run ``nbgrader <args>`` as its own process, without paying nbgrader's import for every student.

``python -m nbgrader autograde --student X`` spends ~0.8 s of CPU importing nbgrader (and Jupyter,
traitlets, sqlalchemy...) before it grades anything: close to half of what grading a quiz notebook
costs, and a serial ``nbgrader autograde`` of the whole class pays it once. Here one forkserver
(the standard library's, :mod:`multiprocessing`) imports nbgrader once; each student's run is a
fresh process forked from it that calls nbgrader's own entry point,
``NbGraderApp.launch_instance(argv)``: what ``python -m nbgrader`` runs, with the course's
environment, working directory, stdin from /dev/null and stdout/stderr in a log — one process per
student as before, killed with its whole job on a timeout.

``CH13_LAUNCH=exec`` falls back to exec'ing ``python -m nbgrader`` (for comparison, or where fork
is unsafe).
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import tempfile
from multiprocessing import context, forkserver, popen_forkserver, reduction, spawn, util

PRELOAD = [
    "nbgrader.apps.nbgraderapp",
    "nbgrader.converters.autograde",
    "kit.external_grade",
    "kit.execute",
    "kit.overwrite",
]


class _Popen(popen_forkserver.Popen):
    """The forkserver's Popen without the main-module fix-up: a child would first re-import the
    parent's ``__main__`` (pytest, a Ray worker, a bench script), which nbgrader never needs. The
    body is the standard library's (3.11-3.13), minus that key."""

    def _launch(self, process_obj):
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Process(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        forkserver.set_forkserver_preload(PRELOAD)  # read when the server first starts
        return _Popen(process_obj)


def _nbgrader_main(argv: list[str], cwd: str, env: dict, log_path: str, zygotes=None) -> None:
    """In the forked child: become ``python -m nbgrader <argv>`` run in ``cwd`` with ``env``
    (its judges forked from ``zygotes``, kit.judges.share's, when given)."""
    os.setsid()  # its own session, as start_new_session gave
    if zygotes is not None:
        from kit import judges

        judges.adopt(zygotes)
    null = os.open(os.devnull, os.O_RDONLY)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    # What the interpreter would have put on sys.path from PYTHONPATH, and the working directory
    # that ``python -m`` puts first (nbgrader_config.py is found from there anyway).
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:0] = [cwd] + [p for p in extra if p not in sys.path]
    code = 0
    try:
        from nbgrader.apps.nbgraderapp import NbGraderApp

        NbGraderApp.launch_instance(argv=argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 — reported in the log, like python -m
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


class Finished:
    def __init__(self, returncode: int | None, log: str, timed_out: bool) -> None:
        self.returncode, self.log, self.timed_out = returncode, log, timed_out


def run_nbgrader(argv: list[str], *, cwd: str, env: dict, timeout: float, on_start=None, zygotes=None) -> Finished:
    """Run nbgrader with ``argv`` (e.g. ["autograde", "ch13_04", "--student=ada"]); ``on_start``
    gets the process id once it runs; ``zygotes`` (kit.judges.share) are passed to it (forked
    runs only). The caller kills the job's other processes afterwards."""
    fd, log_path = tempfile.mkstemp(prefix="ch13-nbgrader-", suffix=".log")
    os.close(fd)
    try:
        if os.environ.get("CH13_LAUNCH") == "exec":
            return _exec(argv, cwd, env, timeout, on_start, log_path)
        proc = _Process(target=_nbgrader_main, args=(argv, cwd, env, log_path, zygotes))
        proc.start()
        if on_start:
            on_start(proc.pid)
        proc.join(timeout)
        timed_out = proc.is_alive()
        if timed_out:
            proc.kill()
            proc.join()
        return Finished(None if timed_out else proc.exitcode, _read(log_path), timed_out)
    finally:
        os.unlink(log_path)


def _exec(argv, cwd, env, timeout, on_start, log_path) -> Finished:
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nbgrader", *argv],
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        if on_start:
            on_start(proc.pid)
        try:
            proc.wait(timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            timed_out = True
    return Finished(None if timed_out else proc.returncode, _read(log_path), timed_out)


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()
