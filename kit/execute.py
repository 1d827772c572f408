"""nbgrader's Execute, made robust: the student's kernel runs sandboxed, and a kernel that dies,
hangs or swallows interrupts no longer fails the whole notebook.

Scores come from kit/external_grade.py, not from execution; executing still matters because the
student (and the TA) read the outputs in the feedback.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Enum, Integer

from kit import ROOT, Words
from kit.config import Feedback, Sandbox
from kit.jobs import Watchdog, job_pids, kill_job, new_token, sandbox_uid

# The "[kit]" notes written into the student's autograded notebook, in the feedback's language
# (c.Feedback.language, ch13lib/lang.py; made at first use, once the path reaches ch13lib).
W = Words(
    notebook_past=("notebook 运行超过了 {s} 秒", "the notebook ran past {s} s"),
    cell_past=("一个单元格按时钟运行超过了 {s} 秒", "a cell ran past {s} s by the clock"),
    kernel_stopped=("{what}: 它的内核已被停止", "{what}: its kernel was stopped"),
    stopped=(
        "[kit] 执行中止: {error}\n隐藏测试仍会 (在 notebook 之外) 为你的答案单元格评分。\n",
        "[kit] execution stopped: {error}\nThe hidden tests still grade your answer cells (outside the notebook).\n",
    ),
    stopped_because=(
        "[kit] 执行中止: {error}\n({why})\n隐藏测试仍会 (在 notebook 之外) 为你的答案单元格评分。\n",
        "[kit] execution stopped: {error}\n({why})\n"
        "The hidden tests still grade your answer cells (outside the notebook).\n",
    ),
    cut=("[kit] 本单元格的输出在 {n} 字节处被截断", "[kit] output of this cell cut at {n} bytes"),
)


class SandboxedKernelClient(AsyncKernelClient):
    """nbclient's kernel client without the heartbeat channel. nbclient asks the kernel manager
    whether the kernel lives (its process), never the heartbeat, and the heartbeat's thread could
    hold a whole autograde: once a kernel's heartbeat broke (a cell wrote frames onto the kernel's
    sockets, or the kernel was killed), jupyter_client's HBChannel reopened its socket and waited
    forever to send its next ping, and ``stop_channels()`` joined that thread forever (py-spy:
    ``HBChannel.stop``, seen on a loaded machine)."""

    def start_channels(self, shell=True, iopub=True, stdin=True, hb=True, control=True):
        super().start_channels(shell=shell, iopub=iopub, stdin=stdin, hb=False, control=control)


class SandboxedKernelManager(AsyncKernelManager):
    """Starts the kernel through kit.sandbox, tagged so that its whole process tree can be killed.

    The kernel talks to nbgrader over unix sockets (ZMQ's ``ipc`` transport) in a folder of its
    own, so it can live in a network namespace with no way out: the student's code in the
    notebook has no network either. A Watchdog kills it (and its children) past the job's memory.
    Its limits are kit.config.Sandbox's, read from the config nbclient hands it (nbgrader's).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.client_factory = SandboxedKernelClient
        self.ch13_limits = Sandbox(parent=self)
        self.ch13_job = new_token()
        self.ch13_uid = sandbox_uid(self.ch13_job)
        self.ch13_ipc = ""
        self.ch13_tmp = ""
        self.ch13_watchdog = None

    async def _async_pre_start_kernel(self, **kw):
        # before the connection file is written: the sockets live in a folder of this kernel's own
        self.ch13_ipc = tempfile.mkdtemp(prefix="ch13-ipc-")
        # The kernel's home in tier 3, removed below with the job (tiers 1 and 2 do not see it and
        # make theirs in their private /tmp). Short: Ray's socket paths are made inside it.
        self.ch13_tmp = tempfile.mkdtemp(prefix="ch13-kernel-")
        if self.ch13_uid is not None:
            os.chown(self.ch13_ipc, self.ch13_uid, self.ch13_uid)
            os.chown(self.ch13_tmp, self.ch13_uid, self.ch13_uid)
        self.transport = "ipc"
        self.ip = os.path.join(self.ch13_ipc, "k")
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        env = dict(kw.get("env") or os.environ)
        env.update(
            CH13_JOB=self.ch13_job,
            PYTHONPATH=ROOT,
            PYTHONHASHSEED="0",
            RAY_AUTH_MODE="disabled",
            RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
            RAY_USAGE_STATS_ENABLED="0",
        )
        kw["env"] = env
        workdir = kw.get("cwd") or os.getcwd()
        # <course>/autograded/<student>/<assignment>: that course's gradebook and folders are hidden
        course = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(workdir))))
        sandbox = [
            sys.executable,
            "-m",
            "kit.sandbox",
            "--no-network",
            "--workdir",
            workdir,
            "--keep",
            self.ch13_ipc,
            "--home",
            self.ch13_tmp,
            "--course",
            course,
            *self.ch13_limits.sandbox_args(),
        ]
        if self.ch13_uid is not None:
            sandbox += ["--uid", str(self.ch13_uid)]
        kernel_cmd = sandbox + ["--"] + list(kernel_cmd)
        limits = self.ch13_limits
        self.ch13_watchdog = Watchdog(
            self.ch13_job, self.ch13_uid, limit_mb=limits.job_memory_mb, max_processes=limits.job_processes
        )
        self.ch13_watchdog.start()
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_shutdown_kernel(self, now=False, restart=False):
        try:
            await super()._async_shutdown_kernel(now=now, restart=restart)
        finally:
            self.ch13_cleanup()

    async def _async_request_shutdown(self, restart: bool = False) -> None:
        self.ch13_sample()
        await super()._async_request_shutdown(restart=restart)

    async def _async_kill_kernel(self, restart: bool = False) -> None:
        self.ch13_sample()
        await super()._async_kill_kernel(restart=restart)

    def ch13_sample(self) -> None:
        """CH13_TIMINGS set: the kernel job's CPU-seconds before any kill (a process killed before
        its parent reaped it takes them along: nbgrader's RUSAGE_CHILDREN never sees them)."""
        if os.environ.get("CH13_TIMINGS"):
            from kit.judge import _cpu_seconds

            seen = _cpu_seconds(job_pids(self.ch13_job, self.ch13_uid))
            self.ch13_cpu_seen = max(getattr(self, "ch13_cpu_seen", 0.0), seen)

    def ch13_cleanup(self) -> None:
        if self.ch13_watchdog is not None:
            self.ch13_watchdog.last_look()  # the kernel's problem names a fork bomb the kill ends
        kill_job(self.ch13_job, self.ch13_uid)  # the kernel's children too (Ray, ranks, ...)
        for folder in (self.ch13_ipc, self.ch13_tmp):
            if folder:
                shutil.rmtree(folder, ignore_errors=True)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            self.ch13_cleanup()

    cleanup_resources = _async_cleanup_resources

    def ch13_problem(self) -> str:
        return self.ch13_watchdog.problem if self.ch13_watchdog is not None else ""

    def ch13_why(self):
        """The watchdog's reason in both languages (a ch13lib.lang.Both), or None."""
        return self.ch13_watchdog.why if self.ch13_watchdog is not None else None


class SafeExecute(Execute):
    max_output_bytes = Integer(
        1_000_000,
        help="Per cell: output beyond this is dropped while the "
        "kernel runs (a student printing gigabytes cannot "
        "exhaust nbgrader's memory)",
    ).tag(config=True)

    shutdown_kernel = Enum(
        ["graceful", "immediate"],
        default_value="immediate",
        help="How the kernel ends once the notebook has run: nbclient's default, graceful, waits up to "
        "KernelManager.shutdown_wait_time (5 s) for a kernel that does not exit on request (one that "
        "ran gloo worlds or Ray, say), and its whole job is killed right after either way",
    ).tag(config=True)

    notebook_timeout = Integer(
        0,
        help="Per notebook, the last guard against a wedged kernel: past this many seconds the "
        "kernel's whole job is killed and the outputs so far are kept (0: every code cell's "
        "timeout plus the startup timeout, plus 60 s; no guard when cells have no timeout)",
    ).tag(config=True)

    cell_wall_timeout = Integer(
        0,
        help="Per code cell, by the clock: past this many seconds the kernel's whole job is killed "
        "and the notebook ends with a note (0: twice Execute.timeout plus 10 s; no guard when cells "
        "have no timeout). nbclient's own timeout counts only time in which no message comes, so a "
        "kernel that keeps sending (one whose sockets the student's code garbled) never meets it",
    ).tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self._ch13_output: dict[int, int] = {}
        self._ch13_expired = ""
        self._ch13_cell_began: float | None = None

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        self._ch13_km = km  # nbclient drops self.km on a dead kernel; its watchdog knows why
        return km

    def output(self, outs, msg, display_id, cell_index):
        used = self._ch13_output.get(cell_index, 0)
        if used > self.max_output_bytes:
            return None
        content = msg.get("content", {})
        size = sum(
            len(v) if isinstance(v, str) else len(str(v))
            for v in [content.get("text", "")] + list((content.get("data") or {}).values())
        )
        self._ch13_output[cell_index] = used + size
        if used + size > self.max_output_bytes:
            outs.append(new_output("stream", name="stdout", text=f"\n{W('cut', n=self.max_output_bytes)}\n"))
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _ch13_limit(self, nb) -> float:
        if self.notebook_timeout > 0:
            return float(self.notebook_timeout)
        if self.timeout is None or self.timeout <= 0:
            return 0.0
        cells = sum(c.cell_type == "code" for c in nb.cells)
        return cells * float(self.timeout) + float(self.startup_timeout) + 60.0

    def _ch13_cell_limit(self) -> float:
        if self.cell_wall_timeout > 0:
            return float(self.cell_wall_timeout)
        if self.timeout is None or self.timeout <= 0:
            return 0.0
        return 2.0 * float(self.timeout) + 10.0

    def preprocess_cell(self, cell, resources, index):
        self._ch13_cell_began = time.monotonic()
        try:
            return super().preprocess_cell(cell, resources, index)
        finally:
            self._ch13_cell_began = None

    def _ch13_guard(self, limit: float, cell_limit: float, done: threading.Event) -> None:
        """Past the notebook's limit, or a cell's by the clock, kill the kernel's job, and again
        every second until the notebook ends: a kernel whose ZMQ sockets the student's code wrote
        garbage into can flood the client with messages, and nbclient, which only times a cell out
        when no message comes, then waits forever (the whole class's autograde with it); with the
        kernel dead, nbclient sees it and raises DeadKernelError. Again, because a limit that falls
        while the kernel is still starting finds no job yet to kill."""
        start = time.monotonic()
        while not done.wait(1.0):
            now, began = time.monotonic(), self._ch13_cell_began
            if not self._ch13_expired:
                if limit and now - start > limit:
                    self._ch13_expired = W.both("notebook_past", s=f"{limit:g}")
                elif cell_limit and began is not None and now - began > cell_limit:
                    self._ch13_expired = W.both("cell_past", s=f"{cell_limit:g}")
            km = getattr(self, "_ch13_km", None)
            if self._ch13_expired and isinstance(km, SandboxedKernelManager):
                kill_job(km.ch13_job, km.ch13_uid)

    def preprocess(self, nb, resources, retry=None):
        from ch13lib.lang import use as use_language  # W's first use below put ch13lib on the path

        W.table()
        use_language(Feedback(parent=self).language)  # the notes' words, as the report's (ExternalGrade)
        self._ch13_output = {}
        self._ch13_km = None
        self._ch13_expired = ""
        timing = _usage() if os.environ.get("CH13_TIMINGS") else None
        limit, cell_limit = self._ch13_limit(nb), self._ch13_cell_limit()
        done = threading.Event()
        if limit or cell_limit:
            threading.Thread(target=self._ch13_guard, args=(limit, cell_limit, done), daemon=True).start()
        try:
            return super().preprocess(nb, resources)
        except Exception as e:  # dead kernel, IOPub timeout, ...: keep the outputs so far
            km = getattr(self, "_ch13_km", None)
            memory = km.ch13_why() if isinstance(km, SandboxedKernelManager) else None
            if self._ch13_expired and not memory:  # the watchdog's reason, when it had one, comes first
                memory = W.both("kernel_stopped", what=self._ch13_expired)
            error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            why = W("stopped_because", error=error, why=memory) if memory else W("stopped", error=error)
            self.log.warning("%s", why.strip())
            first = next((c for c in nb.cells if c.cell_type == "code"), None)
            if first is not None:  # where the student sees it first
                first.setdefault("outputs", []).insert(0, new_output("stream", name="stdout", text=why))
            return nb, resources
        finally:
            done.set()
            if timing is not None:
                _record(timing, resources, getattr(self, "_ch13_km", None))


def _usage() -> tuple[float, float, float]:
    """(wall clock, CPU-seconds of this process, of its children waited for). This nbgrader process
    runs one notebook at a time, so the children's delta over an execution is its kernel's job."""
    import resource
    import time

    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.time(), own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime


def _record(before: tuple[float, float, float], resources: dict, km) -> None:
    from kit.grading import record_timing

    after, info = _usage(), resources.get("nbgrader", {})
    record_timing(
        {
            "kind": "execute",
            "student": info.get("student"),
            "notebook": info.get("notebook"),
            "wall": after[0] - before[0],
            # the sandboxed kernel and whatever it started: as reaped, or as seen before its shutdown
            "cpu": max(after[2] - before[2], getattr(km, "ch13_cpu_seen", 0.0)),
            "self_start": before[1],  # this nbgrader process's own CPU-seconds so far
            "self_end": after[1],
        }
    )
