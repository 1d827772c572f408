"""Start real ``torch.distributed`` worlds the way ``torchrun`` does, without fixed ports.

``launch(world_size, "pkg.module:function", payload)`` starts ``world_size`` Python processes.
Like torchrun's agent, this process hosts the rendezvous ``TCPStore`` — on port 0, so the OS picks
a free port and concurrent gradings never collide — and each worker gets torchrun's environment
(``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``,
``TORCHELASTIC_USE_AGENT_STORE=True``) and calls ``dist.init_process_group(backend)`` with a short
timeout. Then it calls ``function(payload)`` and sends back what it returns (a JSON-able dict);
an exception becomes ``{"error": ...}``. A world that hangs is killed after ``hard_timeout_s``.

Student code reaches the workers as source text (``payload["source"]``), executed there by
:func:`load_source` in a fresh module, exactly as the graders execute an answer cell. While grading,
the worlds are started by :func:`launch_cell` in the subject (kit/subject.py), the sandboxed
process that holds the answer cell, never by the grader: the workers are its children, inside its
sandbox, and each installs the subject's guards (its audit hook, kit/audit.py, and its tamper
check) before the cell runs. This module imports nothing of kit: the subject hands the guards over
(:func:`subject_setup`) to the zygote the ranks are forked from, and a rank that must be guarded
but was handed none runs nothing.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import types

from ch13lib.cell import load, sandboxed, traceback_text, unguarded
from ch13lib.lang import Messages

# What a launched world says of its ranks, in the course's language (ch13lib/lang.py).
M = Messages(
    bad_op=(
        "all_reduce 的 op={op}: 本练习提供 SUM 和 AVG",
        "all_reduce with op={op}: this exercise offers SUM and AVG",
    ),
    hung=(
        "rank {r} 在 world 启动 {s} 秒后仍在运行, 已被终止 (挂起: 某个集合通信或 recv 没有其他 rank 与之匹配?)",
        "rank {r} was still running {s} s after the world started and was stopped (a hang: a collective or recv "
        "that no other rank matches?)",
    ),
    exited=("rank {r} 在报告之前就以退出码 {code} 退出了", "rank {r} exited with code {code} before reporting"),
    no_report=("rank {r}: 没有报告", "rank {r}: no report"),
    not_entry=(
        "不是 rank 的入口 (ch13lib 或 gpu 的 RANK_API): {target}",
        "not a rank entry point (a RANK_API of ch13lib or gpu): {target}",
    ),
)

_HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(_HERE)
SUBJECT_API = ("launch_cell",)  # run in the subject on the answer cell (kit/subject.py)
_zygote: socket.socket | None = None  # set by subject_setup in a subject: ranks start by fork, guarded
_zygote_in = None  # the zygote's answers, read from that socket


def load_source(source: str, name: str = "answer") -> types.ModuleType:
    """Execute a cell's source in a new module (tracebacks quote its lines): ch13lib.cell.load."""
    return load(source, name)


_HAN = re.compile(r"[\u4e00-\u9fff]")


def own_traceback(exc: BaseException) -> str:
    """The exception with the frames of the answer cell (or the last frame), and its message's first
    line: both lines where they are one sentence in Chinese, then in English (ch13lib.lang.say's
    long form); a library's further lines are its own detail."""
    where, lines = traceback_text(exc), str(exc).strip().splitlines()
    keep = 2 if len(lines) > 1 and _HAN.search(lines[0]) and not _HAN.search(lines[1]) else 1
    said = "\n".join(lines[:keep])
    text = "\n".join(([where] if where else []) + [f"{type(exc).__name__}: {said}"])
    # Addresses and ports change from run to run; the feedback must not.
    return re.sub(r"\[?\d+\.\d+\.\d+\.\d+\]?:\d+", "<address>", text)


class DistComm:
    """The exercise's ``comm`` over a real process group (``group`` holds global ranks ``ranks``)."""

    def __init__(self, group, ranks: list[int], device: str = "cpu") -> None:
        import torch.distributed as dist

        self._dist, self._group, self._ranks = dist, group, list(ranks)
        self.rank = dist.get_rank(group)
        self.world_size = len(self._ranks)
        self.device = device
        self.sent_elements = 0
        self.log: list[dict] = []  # every call, as the simulator's world.log writes it

    def _note(self, call: str, t, peer=None, op=None) -> None:
        numel = t.numel() if hasattr(t, "numel") else 0
        dtype = str(getattr(t, "dtype", "?")).replace("torch.", "")
        self.log.append({"rank": self.rank, "call": call, "numel": int(numel), "dtype": dtype, "peer": peer, "op": op})

    def send(self, tensor, dst: int) -> None:
        self._note("send", tensor, dst)
        self.sent_elements += tensor.numel()
        self._dist.send(tensor, group=self._group, group_dst=dst)

    def recv(self, tensor, src: int) -> None:
        self._note("recv", tensor, src)
        self._dist.recv(tensor, group=self._group, group_src=src)

    def isend(self, tensor, dst: int):
        self._note("isend", tensor, dst)
        self.sent_elements += tensor.numel()
        return self._dist.isend(tensor, group=self._group, group_dst=dst)

    def irecv(self, tensor, src: int):
        self._note("irecv", tensor, src)
        return self._dist.irecv(tensor, group=self._group, group_src=src)

    def reduce_scatter_tensor(self, output, input) -> None:
        self._note("reduce_scatter_tensor", output)
        self.sent_elements += (self.world_size - 1) * output.numel()
        self._dist.reduce_scatter_tensor(output, input, group=self._group)

    def all_gather_into_tensor(self, output, input) -> None:
        self._note("all_gather_into_tensor", input)
        self.sent_elements += (self.world_size - 1) * input.numel()
        self._dist.all_gather_into_tensor(output, input, group=self._group)

    def all_reduce(self, tensor, op=None) -> None:
        name = "SUM" if op is None else str(op).split(".")[-1].upper()
        self._note("all_reduce", tensor, op=name)
        self.sent_elements += 2 * (self.world_size - 1) * -(-tensor.numel() // self.world_size)
        ops = {"SUM": self._dist.ReduceOp.SUM, "AVG": self._dist.ReduceOp.AVG}
        if name not in ops:
            raise ValueError(M("bad_op", op=repr(op)))
        self._dist.all_reduce(tensor, op=ops[name], group=self._group)

    def __repr__(self) -> str:
        return f"DistComm(rank={self.rank}, world_size={self.world_size})"


def launch_cell(cell, world_size: int, target: str, payload: dict, *, backend: str = "gloo") -> list[dict]:
    """Subject side: :func:`launch` a world whose ranks run ``target`` on the answer cell.

    ``cell`` is the subject's answer cell (its source and grade_id go to the workers as
    ``payload["source"]`` and ``payload["name"]``); ``target`` must be a function of ch13lib. Every
    worker is forked from the zygote (:func:`subject_setup`), installs the guards the subject
    handed over before the cell runs there (the audit hook, and the snapshot of the harness that
    the subject compares after each request) and adds to its report what the cell was refused
    (``"refused"``) and what of the harness it replaced (``"tampered"``); a worker with no guard
    handed over (outside a subject, or the zygote gone) runs nothing and reports why.
    Returns what :func:`launch` returns, plain data for the grader to judge.
    """
    if not (isinstance(target, str) and target.startswith("ch13lib.") and ":" in target):
        raise ValueError(f"not a ch13lib launch target: {target!r}")
    payload = dict(payload, source=cell.source, name=cell.grade_id)
    return launch(world_size, target, payload, backend=backend, audit=True)


def launch(
    world_size: int,
    target: str,
    payload: dict,
    *,
    backend: str = "gloo",
    timeout_s: float = 20.0,
    hard_timeout_s: float = 60.0,
    start_timeout_s: float = 300.0,
    extra_path: tuple[str, ...] = (),
    audit: bool = False,
) -> list[dict]:
    """Run ``target(payload)`` on every rank of a fresh ``backend`` world of ``world_size`` processes.

    Returns one dict per rank: the target's result, or ``{"error": why}`` when that rank raised,
    crashed or was killed. Starting (importing torch, the rendezvous) may take up to
    ``start_timeout_s`` on a loaded machine and counts against nothing else; once every rank is
    up, collectives time out after ``timeout_s`` and the world is killed ``hard_timeout_s`` later
    if it has still not finished (a blocked gloo ``recv`` never times out by itself). ``audit``:
    each worker runs ``function`` only under the guards the subject handed over (grading, in the
    subject); so does every worker in the grading sandbox, whatever ``audit`` says.
    """
    import time

    import torch.distributed as dist

    with tempfile.TemporaryDirectory(prefix="ch13-world-") as tmp:
        store = dist.TCPStore(
            "127.0.0.1",
            0,
            world_size,
            True,
            timeout=datetime.timedelta(seconds=start_timeout_s),
            wait_for_workers=False,
        )
        with open(os.path.join(tmp, "payload.json"), "w", encoding="utf-8") as f:
            json.dump(
                {
                    "target": target,
                    "backend": backend,
                    "timeout_s": timeout_s,
                    "start_timeout_s": start_timeout_s,
                    "audit": bool(audit),
                    "payload": payload,
                },
                f,
            )
        path = os.pathsep.join([SOURCE_DIR, *extra_path, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        logs, envs = [], []
        for r in range(world_size):
            envs.append(
                dict(
                    os.environ,
                    RANK=str(r),
                    LOCAL_RANK=str(r),
                    WORLD_SIZE=str(world_size),
                    LOCAL_WORLD_SIZE=str(world_size),
                    GROUP_RANK="0",
                    ROLE_RANK=str(r),
                    ROLE_WORLD_SIZE=str(world_size),
                    MASTER_ADDR="127.0.0.1",
                    MASTER_PORT=str(store.port),
                    TORCHELASTIC_USE_AGENT_STORE="True",
                    TORCHELASTIC_RESTART_COUNT="0",
                    TORCHELASTIC_RUN_ID="ch13",
                    OMP_NUM_THREADS="1",
                    PYTHONPATH=path,
                    PYTHONWARNINGS="ignore",
                )
            )
            logs.append(open(os.path.join(tmp, f"rank{r}.log"), "w+b"))
        procs = _forked_ranks(tmp, envs)
        if procs is None and (audit or sandboxed()):
            # Fail closed: a rank that must be guarded gets the guard from the zygote alone. A process
            # of its own would refuse (``_worker``); it is not started at all, since the cell can
            # also choose where its code is found (this module's SOURCE_DIR, the environment).
            for log in logs:
                log.close()
            return [{"error": f"rank {r}: {unguarded()}"} for r in range(world_size)]
        procs = procs or [
            subprocess.Popen(
                # the job's tag, for kit.jobs: a rank that seals its memory hides its environment
                [sys.executable, "-m", "ch13lib.collective_launch", tmp, f"CH13_JOB={env.get('CH13_JOB', '')}"],
                env=env,
                cwd=tmp,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            for env, log in zip(envs, logs)
        ]
        # Wait until every rank has joined (each sets a key once init_process_group returns) or one
        # has exited, whichever comes first: each waiter sets the event, nothing polls.
        started = threading.Event()
        keys = [f"ch13/ready/{r}" for r in range(world_size)]

        def all_ready():
            try:
                store.wait(keys, datetime.timedelta(seconds=start_timeout_s))  # noqa: F821 - deleted only after the join
            except Exception:  # noqa: BLE001 - a timeout: the exits or the guard decide
                pass
            started.set()

        def exited(p):
            p.wait()
            started.set()

        for fn, args in [(all_ready, ())] + [(exited, (p,)) for p in procs]:
            threading.Thread(target=fn, args=args, daemon=True).start()
        started.wait(timeout=start_timeout_s)
        deadline = time.monotonic() + hard_timeout_s
        killed = set()
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                for i, q in enumerate(procs):  # only the processes this call started
                    if q.poll() is None:
                        q.kill()
                        killed.add(i)
                for q in procs:
                    q.wait()
                break
        results = []
        for r in range(world_size):
            out = os.path.join(tmp, f"rank{r}.json")
            if os.path.exists(out):
                with open(out, encoding="utf-8") as f:
                    results.append(json.load(f))
                continue
            logs[r].seek(0)
            tail = logs[r].read().decode("utf-8", "replace").strip().splitlines()[-6:]
            why = M("hung", r=r, s=f"{hard_timeout_s:g}") if r in killed else M("exited", r=r, code=procs[r].returncode)
            results.append({"error": why + ("\n" + "\n".join(tail) if tail and r not in killed else "")})
        for log in logs:
            log.close()
        del store
        return results


# --- Ranks forked from a zygote -------------------------------------------------------------------
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
    what the subject hands over (kit.subject.Trusted); its ``guard`` goes to the zygote only, as an
    argument, so nothing in this process's modules holds it for the cell to rebind."""
    global _zygote, _zygote_in
    import torch.distributed  # noqa: F401 - imported once, here, for every rank

    ours, theirs = socket.socketpair()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        ours.close()
        _zygote_loop(theirs, trusted.guard)
    theirs.close()
    _zygote, _zygote_in = ours, ours.makefile("rb")


def _zygote_loop(ctl: socket.socket, guard) -> None:
    """The zygote: for each request ``{"tmp", "envs"}`` fork one rank per env, answer their pids,
    then each rank's exit code as it ends. Ends (never returns) when the subject closes the socket.
    ``guard`` (the subject's, kit.subject.guard) stays in this frame's locals and each rank's: the
    zygote never runs student code, and a rank's cell can rebind module attributes, not a frame's
    variables."""
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
                    _forked_worker(request["tmp"], r, env, guard)
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


def _forked_worker(tmp: str, rank: int, env: dict, guard) -> None:
    """In a rank forked by the zygote: become what ``python -m ch13lib.collective_launch TMP`` is,
    with the subject's ``guard`` in hand."""
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
        code = _worker(tmp, guard)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _ForkedRank:
    """A rank forked by the zygote, with the part of subprocess.Popen that :func:`launch` uses."""

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
    """The world's ranks forked by the zygote; None where there is none (outside a subject) or it
    is gone, and the caller starts them as processes of their own."""
    global _zygote
    if _zygote is None:
        return None
    try:
        _zygote.sendall(json.dumps({"tmp": tmp, "envs": envs}).encode() + b"\n")
        ranks = [_ForkedRank(pid) for pid in json.loads(_zygote_in.readline())["pids"]]
    except (OSError, ValueError, KeyError, TypeError):
        _zygote = None
        return None

    def exits():
        left = set(range(len(ranks)))
        try:
            while left:
                item = json.loads(_zygote_in.readline())
                ranks[item["rank"]].returncode = item["code"]
                ranks[item["rank"]].done.set()
                left.discard(item["rank"])
        except (OSError, ValueError, KeyError, TypeError, IndexError):  # the zygote died: so did its ranks
            for r in left:
                ranks[r].returncode = -signal.SIGKILL
                ranks[r].done.set()

    threading.Thread(target=exits, daemon=True).start()
    return ranks


class _Unguarded(PermissionError):
    """A rank that must be guarded and was handed no guard: it reports the whole message, in both
    languages (a traceback's report keeps a message's first line)."""


def _worker(tmp: str, guard=None) -> int:
    """One rank of a launched world (run as ``python -m ch13lib.collective_launch DIR``).

    ``guard``: the subject's (kit.subject.guard, handed to a rank forked from its zygote), which
    installs its guards in this rank; it is used whatever the payload says (the payload is written
    where the cell can write too). A rank in a sandbox, or one whose payload asks for the guards,
    must be guarded: with no guard handed over (started as a process of its own) it runs nothing
    and reports why, and a guarded rank runs only a function its module (of ch13lib, or the kit's
    GPU runner) lists in ``RANK_API``: the cell can call :func:`launch` itself, with any target and
    ``audit=False``."""
    import importlib
    import warnings

    warnings.simplefilter("ignore")
    rank = int(os.environ["RANK"])
    with open(os.path.join(tmp, "payload.json"), encoding="utf-8") as f:
        spec = json.load(f)
    report = None
    try:
        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        kwargs = {}
        if spec["backend"] == "nccl":
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            kwargs["device_id"] = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        # A long timeout to start (a loaded machine imports torch slowly), then a short one for the work.
        dist.init_process_group(spec["backend"], timeout=datetime.timedelta(seconds=spec["start_timeout_s"]), **kwargs)
        try:
            from torch.distributed.distributed_c10d import _set_pg_timeout

            _set_pg_timeout(datetime.timedelta(seconds=spec["timeout_s"]))
        except (ImportError, RuntimeError, ValueError):
            pass
        # Past this barrier every rank has read the payload: it goes before any cell runs, which could
        # otherwise read the judge's hidden values in it (the folder is easy to find)
        dist.barrier()
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(tmp, "payload.json"))
        ready = dist.TCPStore(
            os.environ["MASTER_ADDR"],
            int(os.environ["MASTER_PORT"]),
            is_master=False,
            timeout=datetime.timedelta(seconds=spec["start_timeout_s"]),
        )
        ready.set(f"ch13/ready/{rank}", "1")
        module, func = spec["target"].split(":")
        guarded = guard is not None or bool(spec.get("audit")) or sandboxed()
        if guarded and guard is None:  # fail closed: no guard was handed over (checked before any import)
            raise _Unguarded(unguarded())
        if guarded and module.split(".")[0] not in ("ch13lib", "gpu"):
            raise PermissionError(M("not_entry", target=repr(spec["target"])))
        imported = importlib.import_module(module)
        if guarded and func not in getattr(imported, "RANK_API", ()):
            raise PermissionError(M("not_entry", target=repr(spec["target"])))
        target = getattr(imported, func)
        if guarded:  # as in the subject: the guards are in place before the cell runs
            # Held in this frame's locals, as the subject holds its own: the cell can rebind module
            # attributes, not a running frame's variables.
            report = guard([module])
        result = target(spec["payload"])
    except BaseException as e:  # noqa: BLE001 - every failure becomes this rank's report
        result = {"error": f"rank {rank}: " + (str(e) if type(e) is _Unguarded else own_traceback(e))}
    if report is not None:  # what the cell was refused, and what of the harness it replaced
        flags = report()
        if any(flags.values()):
            result = dict(result) if isinstance(result, dict) else {"error": M("no_report", r=rank)}
            result.update({k: v for k, v in flags.items() if v})
    tmp_out = os.path.join(tmp, f"rank{rank}.json.part")
    with open(tmp_out, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp_out, os.path.join(tmp, f"rank{rank}.json"))
    return 0


if __name__ == "__main__":
    sys.stdout.flush()
    code = _worker(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter shutdown: a process group left mid-collective by a wrong answer must not hang us.
    os._exit(code)
