"""The judge's end of the channel to a subject (kit/subject.py): start it sandboxed, ask, guard.

The judge (graders/__main__.py running one grader) never executes the student's code: it asks a
:class:`Subject` for plain data and decides. A subject that dies, hangs, sends too much, sends
something that is not plain data, or writes frames of its own costs the test that was running; the
next request starts a fresh subject. A subject that hangs while the cell itself first runs costs
every test (there is nothing to grade).

Hang guard, counted in the subject's own CPU time (its whole process tree), so a CPU burner graded
beside an honest student cannot make the honest one look hung:
- busy: the request used more CPU-seconds than the cell's remaining budget;
- idle: past the remaining budget in wall time, and the job used almost no CPU for the last
  ``IDLE_WINDOW_S`` seconds (a deadlock, a wait nothing ends);
- backstop: ``BACKSTOP`` times the remaining budget in wall time, whatever the CPU says.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import time

from kit import ROOT, SOURCE_DIR, STEADY_ENV, Words, subjects, wire
from kit.jobs import job_pids, kill_as, remove_cpu_group, sandbox_uid

# Why a request was lost, as the student reads it in the test's message (ch13lib/lang.py, made at
# first use: the subjects' zygote imports this module too). A Lost carries the sentence in both
# languages (a Both): str() says it in the language in force, and a sentence around it takes each
# language's side.
W = Words(
    hang=(
        "评分已停止: 你的代码在本单元格的时间内始终没有结束 (死循环、死锁, 或一个永远等不到结果的等待)",
        "grading stopped: your code never finished within the cell's time "
        "(an infinite loop, a deadlock, or a wait that nothing ends)",
    ),
    signal=(
        "运行你代码的进程被信号 {n} 终止 (原生代码崩溃, 或触及资源限制)",
        "the process running your code was killed by signal {n} (a crash in native code, or a resource limit)",
    ),
    exited=("运行你代码的进程已退出 (状态 {code}){tail}", "the process running your code exited (status {code}){tail}"),
    no_value=("运行你代码的进程发来了一个没有值的回答", "the process running your code sent an answer without a value"),
    not_data=(
        "运行你代码的进程发来了不是普通数据的东西 ({detail})",
        "the process running your code sent something that is not plain data ({detail})",
    ),
    forged=(
        "通往评分程序的通道里出现了一帧不是测试框架写的数据 (已标记, 请助教复查)",
        "the channel to the grader carried a frame the harness did not write (flagged for the TA's review)",
    ),
    before_tests=(
        "{why} (发生在你的单元格本身运行时, 任何测试之前)",
        "{why} (while your cell itself ran, before any test)",
    ),
    stalled=("{s} 秒内没有收到消息", "no message for {s} s"),
)

IDLE_WINDOW_S = 5.0
IDLE_CPU_S = 0.5  # CPU-seconds over the idle window below which the job counts as idle
# (an idle Ray cluster alone uses ~0.2 s per 5 s)
BACKSTOP = 3.0
POLL_S = 0.25
TICKS = os.sysconf("SC_CLK_TCK")


class Lost(Exception):
    """The subject could not answer: the message says why, in the student's terms (``why``: in
    both languages, a Both, where the judge made it)."""

    @property
    def why(self):
        return self.args[0] if self.args else ""


class Stalled(Lost):
    """A conversation's subject sent no message within its step's guard (Subject.converse)."""


class Forged(Exception):
    """An answer frame without the seal of the subject's key (kit.wire.seal): the cell wrote it."""


@dataclasses.dataclass
class Reply:
    value: object = None
    refused: list = dataclasses.field(default_factory=list)
    tampered: list = dataclasses.field(default_factory=list)


class Raised(Exception):
    """The student's code (or a harness on it) raised: type name, message and cell traceback as text."""

    def __init__(self, info: dict) -> None:
        self.type = str(info.get("type", "Exception"))
        self.module = str(info.get("module", ""))
        kinds = info.get("builtins")
        self.builtins = [str(k) for k in kinds] if type(kinds) is list else []  # kit.subject.builtin_kinds
        self.message = str(info.get("message", ""))
        self.traceback = str(info.get("traceback", ""))
        self.reply = Reply()
        super().__init__(f"{self.type}: {self.message}")

    @property
    def flagged(self) -> bool:
        """The cell was refused something or replaced part of the harness during this request."""
        return bool(self.reply.refused or self.reply.tampered)

    def is_a(self, builtin: str) -> bool:
        """An instance of the built-in exception class ``builtin`` (a subclass of it counts, a class
        of the cell's that only takes its name does not), raised by a request the guard has nothing
        against."""
        return builtin in self.builtins and not self.flagged

    @property
    def from_harness(self) -> bool:
        """A failure a public harness reported (a CheckFailed, a SimFailure...), not a crash."""
        return self.module.startswith("ch13lib")

    def describe(self) -> str:
        where = f"\n{self.traceback}" if self.traceback else ""
        return f"{self.type}: {self.message}{where}"


def _cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue
    return total / TICKS


class Subject:
    """One subject process at a time for one answer cell; restarted after a lost request."""

    def __init__(
        self,
        grade_id: str,
        source: str,
        *,
        harness: list[str],
        budget_s: float,
        sandbox: bool = True,
        gpu: bool = False,
        course: str | None = None,
        sandbox_args: list[str] | None = None,
        token: str | None = None,
    ) -> None:
        self.grade_id, self.source, self.harness = grade_id, source, list(harness)
        # kit.sandbox's limits (kit.config.Sandbox.sandbox_args, from the judge's command line);
        # None: kit.sandbox's own defaults
        self.sandbox_args = list(sandbox_args or [])
        # CPU-seconds (and idle wall seconds) for the whole cell, shared with its siblings (budget_s)
        self._budget = [budget_s]
        self.sandbox, self.gpu, self.course = sandbox, gpu, course
        self.token = token or os.environ.get("CH13_JOB") or secrets.token_hex(16)
        self.group = [self]  # this subject and its siblings (one job: stopping one stops them all)
        self.uid = sandbox_uid(self.token) if sandbox else None
        self.proc: subprocess.Popen | subjects.ForkedSubject | None = None
        self.dead_for_good = ""  # the cell hangs or dies as it first runs
        self.work = tempfile.mkdtemp(prefix=f"ch13-subject-{grade_id}-")
        os.chmod(self.work, 0o755)
        self.log_path = self.work + ".log"
        with open(os.path.join(self.work, "answer.py"), "w", encoding="utf-8") as f:
            f.write(source)
        self._ids = 0
        self._key = b""  # the seal's key of the running subject (kit.wire.seal); new at each start
        self.starts = 0
        self.loaded = False
        # The reply of a request the cell was refused in (or tampered during), shared by the group:
        # it answers every later request at once until the test runner begins the next test
        # (new_test). A refusal is the verdict; restarting a sandbox for each of hypothesis's
        # shrinking steps only to be refused again took minutes.
        self._flag: list[Reply | None] = [None]

    # ------------------------------------------------------------ process
    def _command(self) -> list[str]:
        subject = [
            sys.executable,
            "-c",
            subjects.ENTRY,
            f"CH13_JOB={self.token}",
            self.grade_id,
            "answer.py",
        ] + self.harness
        if not self.sandbox:
            return subject
        cmd = [
            sys.executable,
            "-m",
            "kit.sandbox",
            "--no-network",
            "--workdir",
            self.work,
            "--hide",
            os.path.join(ROOT, "graders"),
            *self.sandbox_args,
        ]
        if self.course:
            cmd += ["--course", self.course]
        if self.uid is not None:
            cmd += ["--uid", str(self.uid)]
        return cmd + ["--"] + subject

    def _env(self) -> dict:
        env = dict(os.environ)
        env.update(
            STEADY_ENV,
            PYTHONPATH=os.pathsep.join([ROOT, SOURCE_DIR]),
            CH13_JOB=self.token,
            CH13_DEVICE="gpu" if self.gpu else "cpu",
            PYTHONDONTWRITEBYTECODE="1",
        )
        if not self.gpu:
            env["NUMBA_ENABLE_CUDASIM"] = "1"
        return env

    def start(self) -> None:
        if self.proc is not None:
            return
        if self.sandbox:
            from kit.sandbox import make_kit_reachable  # root only: the job's uid reaches the kit

            make_kit_reachable()
        self.starts += 1
        if subjects.usable(self.sandbox, self.gpu, self.harness):  # forked from the subjects' zygote
            command = self._command()  # python -m kit.sandbox OPTIONS -- python -c ENTRY ...
            self.proc = subjects.start(
                command[3:], env=self._env(), cwd=self.work, log_path=self.log_path, harness=self.harness
            )
            if self.proc is not None:
                self._hand_key()
                return
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            self.proc = subprocess.Popen(
                self._command(),
                cwd=self.work,
                env=self._env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        finally:
            log.close()
        self._hand_key()

    def _hand_key(self) -> None:
        """The first bytes on the request pipe: the key that seals every answer of this process. The
        subject reads it before it loads anything of the student's; a dead subject shows at the
        first request."""
        self._key = secrets.token_bytes(wire.KEY_SIZE)
        try:
            os.write(self.proc.stdin.fileno(), self._key)  # 32 bytes on an empty pipe: written whole
        except OSError:
            pass

    def pids(self) -> list[int]:
        """The subject's processes: its uid's (as root) or its token's, never the judge itself."""
        found = job_pids(self.token, self.uid) if self.uid is not None else job_pids(self.token)
        return [p for p in found if p != os.getpid() and p != os.getppid()] or ([self.proc.pid] if self.proc else [])

    @property
    def budget_s(self) -> float:
        """What is left of the cell's budget: one budget for the subject and all its siblings (a
        cell whose ranks burn CPU spends it as one cell would)."""
        return self._budget[0]

    @budget_s.setter
    def budget_s(self, value: float) -> None:
        self._budget[0] = value

    def sibling(self) -> Subject:
        """Another subject of the same cell in the same job (a rank of a simulated world whose
        broker is the judge): its own process and sandbox, so it shares no memory with this one.
        They share the job's uid, so stopping one stops all: each then restarts when next asked."""
        other = Subject(
            self.grade_id,
            self.source,
            harness=self.harness,
            budget_s=self.budget_s,
            sandbox=self.sandbox,
            gpu=self.gpu,
            course=self.course,
            sandbox_args=self.sandbox_args,
            token=self.token,
        )
        other.group, other._budget, other._flag = self.group, self._budget, self._flag
        self.group.append(other)
        return other

    def stop(self) -> None:
        if self.proc is None:
            return
        for other in self.group:  # killed below with the rest of the job: forget their processes
            if other is not self and other.proc is not None:
                other._forget()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        for _ in range(3):  # a dying parent may fork once more: sweep until none is left
            pids = self.pids() if self.uid is None else job_pids(self.token, self.uid)
            pids = [p for p in pids if p != os.getpid()]
            if not pids:
                break
            if self.uid is not None and os.geteuid() == 0:
                kill_as(self.uid)
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
        self._forget()

    def _forget(self) -> None:
        proc, self.proc = self.proc, None
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            proc.kill()
        except OSError:
            pass
        proc.wait()

    def close(self) -> None:
        if self.group[0] is self:
            for other in self.group[1:]:
                other.close()
        self.stop()
        remove_cpu_group(self.token)  # empty once the subject is gone (grade_cell's kill_job does it too)
        shutil.rmtree(self.work, ignore_errors=True)
        if os.path.exists(self.log_path):
            os.remove(self.log_path)

    def output_tail(self, size: int = 1500) -> str:
        """The end of what the student's code printed (their own output, capped)."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - size))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(line for line in text.splitlines() if not line.startswith("kit.sandbox:"))

    # ------------------------------------------------------------ requests
    def request(self, op: wire.Op, name: str | None = None, args=(), kwargs=None) -> Reply:
        """Ask once; the subject's answer as a :class:`Reply` (or :class:`Raised`, :class:`Lost`)."""
        loaded = self._prepare(op)
        if loaded is not None:
            return loaded
        answer = self._exchange({"op": op, "name": name, "args": list(args), "kwargs": dict(kwargs or {})})
        if "yield" in answer:  # only a conversation (converse) may talk back
            self.stop()
            raise Lost(W.both("no_value"))
        return self._finish(answer)

    def converse(self, name: str, args=(), kwargs=None, *, step_s: float | None = None):
        """Run a harness that talks back (a generator in the subject, kit/subject.py): a generator
        here that yields each message the harness sends, is sent the answer to each, and returns
        the final :class:`Reply` (or raises :class:`Raised`, :class:`Lost`). ``step_s``: the most
        CPU-seconds (and idle wall seconds) the subject may take to send its next message."""
        loaded = self._prepare("run")
        if loaded is not None:
            return loaded
        message = {"op": "run", "name": name, "args": list(args), "kwargs": dict(kwargs or {})}
        while True:
            answer = self._exchange(message, step_s=step_s)
            if "yield" not in answer:
                return self._finish(answer)
            message = {"op": "resume", "name": None, "args": [(yield answer["yield"])], "kwargs": {}}

    def new_test(self) -> None:
        """A new test begins: a refusal in the last one no longer answers for the cell."""
        self._flag[0] = None

    def _prepare(self, op: str) -> Reply | None:
        """Start the subject (and load the cell first): a Reply when the load already answers, or
        when the cell was refused something earlier in this test (new_test)."""
        if self._flag[0] is not None:
            return self._flag[0]
        if self.dead_for_good:
            raise Lost(self.dead_for_good)
        if self.budget_s <= 0:
            raise Lost(self._hang_text())
        first = not self.loaded
        self.start()
        if first and op != "load":
            self.loaded = True
            loaded = self.request("load")
            if loaded.refused or loaded.tampered:  # the cell's top level already did it: that is the answer
                return loaded
            self.start()  # (a no-op unless the load stopped it)
        return None

    def _exchange(self, message: dict, step_s: float | None = None) -> wire.Answer:
        """Write one sealed request and read its answer: a dict with the request's id and nonce."""
        op = message["op"]
        self._ids += 1
        nonce = secrets.token_hex(8)
        message: wire.Request = {"id": self._ids, "nonce": nonce, **message}
        try:
            wire.write_frame(self.proc.stdin.fileno(), message, key=self._key)
            self.proc.stdin.flush()
            answer = self._wait(self.proc.stdout.fileno(), step_s)
        except Lost as e:
            self.stop()
            if op == "load":
                self.dead_for_good = W.both("before_tests", why=e.why)
                raise Lost(self.dead_for_good) from None
            raise
        except (OSError, EOFError, BrokenPipeError):
            code = self._exit_code()
            self.stop()
            why = self._died_text(code)
            if op == "load":
                self.dead_for_good = W.both("before_tests", why=why)
                raise Lost(self.dead_for_good) from None
            raise Lost(why) from None
        except wire.WireError as e:
            self.stop()
            raise Lost(W.both("not_data", detail=str(e))) from None
        except Forged:
            answer = None  # not sealed with this subject's key: the cell wrote it
        self.loaded = True
        if type(answer) is dict and answer.get("forged") is True:  # the subject got a request we did not seal
            answer = None
        if type(answer) is not dict or answer.get("id") != self._ids or answer.get("nonce") != nonce:
            self.stop()
            raise Lost(W.both("forged"))
        return answer

    def _finish(self, answer: dict) -> Reply:
        reply = Reply(
            refused=[str(x) for x in answer.get("refused") or []][:20],
            tampered=[str(x) for x in answer.get("tampered") or []][:20],
        )
        if reply.tampered or reply.refused:
            self.stop()  # the next test gets a subject the cell has not changed
            self._flag[0] = Reply(refused=reply.refused, tampered=reply.tampered)
        if "raised" in answer and type(answer["raised"]) is dict:
            error = Raised(answer["raised"])
            error.reply = reply
            raise error
        if "ok" not in answer:
            raise Lost(W.both("no_value"))
        reply.value = answer["ok"]
        return reply

    def _wait(self, fd: int, step_s: float | None = None):
        """Read one answer frame under the hang guard: a subject that sends part of a frame and
        stops is as hung as one that sends nothing. ``step_s``: a tighter guard for this frame
        alone (:class:`Stalled`; the cell's budget is charged, not spent)."""
        start = time.monotonic()
        pids = None
        cpu0 = None
        window: list[tuple[float, float]] = []
        os.set_blocking(fd, False)
        buffer, need = bytearray(), wire.HEADER.size
        while True:
            ready, _, _ = select.select([fd], [], [], POLL_S)
            if ready:
                try:
                    chunk = os.read(fd, min(need - len(buffer), 1 << 20))
                except BlockingIOError:
                    chunk = None
                if chunk == b"":
                    raise EOFError("the subject closed the channel")
                if chunk:
                    buffer += chunk
                    if len(buffer) == need and need == wire.HEADER.size:
                        (size,) = wire.HEADER.unpack(bytes(buffer))
                        if size > wire.MAX_FRAME:
                            raise wire.WireError(f"a frame of {size} bytes, over the limit of {wire.MAX_FRAME}")
                        need += size
                    if len(buffer) == need:
                        break
                    continue
            now = time.monotonic() - start
            if now < 0.5:
                continue
            pids = self.pids()
            cpu = _cpu_seconds(pids)
            if cpu0 is None:
                cpu0 = cpu
                continue
            used = cpu - cpu0
            window.append((now, cpu))
            window = [(t, c) for t, c in window if now - t <= IDLE_WINDOW_S]
            idle = (
                now > IDLE_WINDOW_S
                and window[-1][1] - window[0][1] < IDLE_CPU_S
                and window[-1][0] - window[0][0] >= IDLE_WINDOW_S - 2 * POLL_S
            )
            if used > self.budget_s or (now > self.budget_s and idle) or now > BACKSTOP * self.budget_s:
                self.budget_s = 0  # the cell's time is spent: later tests say so at once
                raise Lost(self._hang_text())
            if step_s is not None and (used > step_s or (now > step_s and idle) or now > BACKSTOP * step_s):
                self.budget_s -= used
                raise Stalled(W.both("stalled", s=f"{step_s:g}"))
        if cpu0 is not None:
            self.budget_s -= max(0.0, _cpu_seconds(pids) - cpu0)
        body = wire.unseal(self._key, bytes(buffer[wire.HEADER.size :]))
        if body is None:
            raise Forged
        return wire.decode(body)

    def _hang_text(self):
        return W.both("hang")

    def _exit_code(self):
        try:
            return self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return None

    def _died_text(self, code):
        if code is not None and code > 128 and self.sandbox:
            code = 128 - code  # kit.sandbox's outside parent reports its pid-1 child's signal as 128 + n
        if code is not None and code < 0:
            return W.both("signal", n=-code)
        tail = self.output_tail().strip().splitlines()[-3:]
        return W.both("exited", code=code, tail=": " + " | ".join(tail) if tail else "")
