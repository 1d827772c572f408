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
the worlds are started in the subject (kit/subject.py), the sandboxed process that holds the answer
cell, never by the grader, by the grading side's harness (kit/harnesses/collective_launch.py
``launch_cell``, never released): the workers are its children, inside its sandbox, forked from a
zygote the subject handed its guards to, and each installs them (its audit hook, kit/audit.py, and
its tamper check) before the cell runs. This module imports nothing of kit: a rank is handed the
guard and the entries it may run (``_worker``), and a rank that must be guarded but was handed none
runs nothing.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
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
        "不是 rank 的入口 (评分进程交给它的 RANK_API 之一): {target}",
        "not a rank entry point (a RANK_API the grading process handed over): {target}",
    ),
)

_HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(_HERE)


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
    start=None,
) -> list[dict]:
    """Run ``target(payload)`` on every rank of a fresh ``backend`` world of ``world_size`` processes.

    Returns one dict per rank: the target's result, or ``{"error": why}`` when that rank raised,
    crashed or was killed. Starting (importing torch, the rendezvous) may take up to
    ``start_timeout_s`` on a loaded machine and counts against nothing else; once every rank is
    up, collectives time out after ``timeout_s`` and the world is killed ``hard_timeout_s`` later
    if it has still not finished (a blocked gloo ``recv`` never times out by itself). ``audit``:
    each worker runs ``function`` only under the guards the subject handed over (grading, in the
    subject); so does every worker in the grading sandbox, whatever ``audit`` says. ``start``: how
    the grading side starts the ranks, ``start(tmp, envs)`` -> processes or None (forked from the
    zygote the subject handed its guards to: kit/harnesses/collective_launch.py); without it, or
    when it returns None, each rank is a process of its own, which a guarded world never starts.
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
        procs = start(tmp, envs) if start is not None else None
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


class _Unguarded(PermissionError):
    """A rank that must be guarded and was handed no guard: it reports the whole message, in both
    languages (a traceback's report keeps a message's first line)."""


def _worker(tmp: str, guard=None, entries=None) -> int:
    """One rank of a launched world (run as ``python -m ch13lib.collective_launch DIR``).

    ``guard``: the subject's (kit.subject.guard, handed to a rank forked from its zygote), which
    installs its guards in this rank; it is used whatever the payload says (the payload is written
    where the cell can write too). ``entries``: what the subject handed over with it
    (``kit.subject.Trusted.ranks``), ``(("module:function", function), ...)``, the ``RANK_API``
    functions of its harness modules (of ch13lib, kit/harnesses or the kit's GPU runner). A rank in
    a sandbox, or one whose payload asks for the guards, must be guarded: with no guard handed over
    (started as a process of its own) it runs nothing and reports why, and a guarded rank runs only
    a function of ``entries``, nothing it imports by name: the cell can call :func:`launch` itself,
    with any target and ``audit=False``."""
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
        if guarded:  # only what the subject handed over, looked up by the exact name: no import here
            target = dict(entries or ()).get(spec["target"])
            if target is None:
                raise PermissionError(M("not_entry", target=repr(spec["target"])))
        else:
            target = getattr(importlib.import_module(module), func)
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
