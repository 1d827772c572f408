"""Ranks in processes of their own (a part of :mod:`ch13lib.procgroup`).

The broker's side (``_relay``, ``_perform``: rank r's thread of ``SimWorld.run_remote`` rebuilds
every tensor from the message and performs the call in the judge's world) and the rank's side
(:func:`serve_rank` and :class:`RemoteComm`, which turn every call into a message). Its own module
because it changes with the message format, not with the world's semantics: it reaches the world
only through rank r's ``SimComm``, ``advance``, ``_error`` and the lists it fills (``sends``,
``flow``, ``finals``).
"""

from __future__ import annotations

import math
import queue
import threading
from fractions import Fraction
from typing import TYPE_CHECKING

import torch

from ch13lib._procgroup_core import _RELAYED, _Abort, _user_line
from ch13lib.lang import Messages

if TYPE_CHECKING:
    from ch13lib.procgroup import SimComm, SimWorld

# What the broker says of a rank that talks to it out of turn (only a harness interfered with does),
# in the course's language (ch13lib/lang.py).
M = Messages(
    malformed_call=("rank {me} 向中转者发送了格式有误的调用", "rank {me} sent the broker a malformed call"),
    malformed_tensor=("rank {me} 向中转者发送了格式有误的张量", "rank {me} sent the broker a malformed tensor"),
    not_a_call=("rank {me} 向中转者发送了不是调用的东西", "rank {me} sent the broker something that is not a call"),
    malformed_clock=(
        "rank {me} 向中转者发送了格式有误的时钟计费",
        "rank {me} sent the broker a malformed clock charge",
    ),
    never_made=("rank {me} 等待了一个中转者从未发出的请求", "rank {me} waited on a request the broker never made"),
    not_offered=(
        "rank {me} 向中转者请求 {name}, comm 不提供它",
        "rank {me} asked the broker for {name}, which comm does not offer",
    ),
)

_DTYPES = {
    name: getattr(torch, name)
    for name in ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
}


class _Stop(BaseException):
    """Unwinds a remote rank whose world ended (raised in the student's code by RemoteComm)."""


class RemoteRankRaised(Exception):
    """A remote rank's code raised; ``text``: its traceback as the rank's process wrote it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class _Shown:
    """A remote rank's peer argument that was not an int: only its repr travels."""

    def __init__(self, text: str) -> None:
        self._text = text

    def __repr__(self) -> str:
        return self._text


def _mirror(world: SimWorld, me: int, m, data_key: str = "data"):
    """The broker's copy of a tensor a remote rank passed to comm (its shape, strides, dtype, and
    data where the call sends it), or a stand-in of the type it named."""
    if type(m) is not dict:
        world._error(me, M.both("malformed_call", me=me))
    if "type" in m:
        return type(str(m["type"])[:60] or "object", (), {})()
    shape, stride, dtype = m.get("shape"), m.get("stride"), _DTYPES.get(m.get("dtype"))
    ok = type(shape) is list and type(stride) is list and len(shape) == len(stride) <= 8
    ok = ok and all(type(n) is int and 0 <= n <= 2**24 for n in shape) and all(type(n) is int for n in stride)
    if not ok or dtype is None or math.prod(shape) > 2**24:
        world._error(me, M.both("malformed_tensor", me=me))
    numel = math.prod(shape)
    span = 1 + sum((n - 1) * abs(st) for n, st in zip(shape, stride)) if numel else 0
    if numel and all(st >= 0 for st in stride) and span <= 2 * numel + 64:
        t = torch.zeros(0, dtype=dtype).new_empty_strided(shape, stride).zero_()
    else:  # only whether it is contiguous matters here
        t = torch.zeros(shape, dtype=dtype)
    data = m.get(data_key)
    if data is not None:
        if not isinstance(data, torch.Tensor) or data.dtype != dtype or data.numel() != numel:
            world._error(me, M.both("malformed_tensor", me=me))
        with torch.no_grad():
            t.copy_(data.reshape(shape))
    return t


def _peer(p):
    return p if type(p) in (int, bool) else _Shown(str(p.get("repr", "?"))[:80] if type(p) is dict else "?")


def _relay(world: SimWorld, me: int, comm: SimComm, conversation, finish) -> object:
    """Rank ``me``'s thread of a remote world: perform, in order, each batch of calls its process
    sends (the calls it made since its last answer: serve_rank), and answer each."""
    works: dict = {}  # isend/irecv id -> (Work, the broker's copy of its tensor, "send" or "recv")
    try:
        batch = next(conversation)
    except StopIteration as e:
        world.finals[me] = e.value
        return finish(me, e.value)
    while True:
        if type(batch) is not list or not batch:
            world._error(me, M.both("not_a_call", me=me))
        answers = []
        try:
            for call in batch:
                answers.append(_perform(world, me, comm, call, works))
        except _Abort:
            _stop(world, me, conversation, len(batch))
            raise
        finally:
            _RELAYED.where = None
        try:
            batch = conversation.send(answers)
        except StopIteration as e:
            world.finals[me] = e.value
            return finish(me, e.value)


def _stop(world: SimWorld, me: int, conversation, pending: int) -> None:
    """The world failed while rank ``me`` was in a call: tell its process to unwind, and keep what
    its conversation returns (the flags of its last answer)."""
    for _ in range(8):  # a rank that catches the stop and calls again is told again, a few times
        try:
            batch = conversation.send([{"stop": True}] * pending)
            pending = len(batch) if type(batch) is list else 1
        except StopIteration as e:
            world.finals[me] = e.value
            return
        except BaseException:  # noqa: BLE001 - a lost process: the world has failed anyway
            return
    conversation.close()


def _perform(world: SimWorld, me: int, comm: SimComm, call, works: dict) -> dict:
    if type(call) is not dict:
        world._error(me, M.both("not_a_call", me=me))
    _RELAYED.where = str(call.get("where", "?"))[:300]
    inflight = call.get("inflight")
    if type(inflight) is dict:  # an isend's buffer as it is now (checked against what was sent)
        for key, data in inflight.items():
            work = works.get(key)
            if work is not None and work[2] == "send" and isinstance(data, torch.Tensor):
                if data.dtype == work[1].dtype and data.numel() == work[1].numel():
                    with torch.no_grad():
                        work[1].copy_(data.reshape(work[1].shape))
    name, key = call.get("call"), str(call.get("id"))
    if name == "advance":  # a pipeline stage's work on the logical clock (RemoteComm._advance)
        ticks, label = call.get("ticks"), call.get("label")
        if not (
            type(ticks) is list
            and len(ticks) == 2
            and all(type(v) is int for v in ticks)
            and 0 <= ticks[0] <= 10**6
            and 0 < ticks[1] <= 10**6
            and type(label) is list
            and len(label) == 2
            and label[0] in ("F", "B")
            and type(label[1]) is int
        ):
            world._error(me, M.both("malformed_clock", me=me))
        world.advance(me, Fraction(ticks[0], ticks[1]), (label[0], label[1]))
        if world.flow is not None:
            world.flow.append((me, label[0], Fraction(ticks[0], ticks[1])))
        return {}
    if name in ("send", "isend"):
        t, dst = _mirror(world, me, call.get("t")), _peer(call.get("peer"))
        if world.flow is not None:
            world.flow.append((me, "put", dst, t.detach().clone()))
        done = getattr(comm, name)(t, dst)
        view = call.get("view")
        world.sends.append(
            [me, sum(1 for s in world.sends if s[0] == me), dst, t.numel(), view if type(view) is int else -1]
        )
        if name == "isend":
            works[key] = (done, t, "send")
        return {}
    if name in ("recv", "irecv"):
        t, src = _mirror(world, me, call.get("t")), _peer(call.get("peer"))
        done = getattr(comm, name)(t, src)
        if name == "irecv":
            works[key] = (done, t, "recv", src)
            return {}
        if world.flow is not None:
            world.flow.append((me, "got", src, t.detach().clone()))
        return {"data": t.detach().clone()}
    if name in ("wait", "poll"):
        if key not in works:
            world._error(me, M.both("never_made", me=me))
        work, t, kind = works[key][:3]
        if name == "poll":
            return {"done": bool(work.is_completed())}
        work.wait()
        if kind == "recv" and world.flow is not None:
            world.flow.append((me, "got", works[key][3], t.detach().clone()))
        return {"data": t.detach().clone()} if kind == "recv" else {}
    if name in ("reduce_scatter_tensor", "all_gather_into_tensor", "all_reduce"):
        if name == "all_reduce":
            t = _mirror(world, me, call.get("inp"))
            comm.all_reduce(t, call.get("op") if type(call.get("op")) is str else None)
            return {"data": t.detach().clone()}
        out, inp = _mirror(world, me, call.get("out")), _mirror(world, me, call.get("inp"))
        if world.flow is not None:  # what each rank contributed (zero1's dataflow check reads it)
            world.flow.append((me, name, inp.detach().clone()))
        getattr(comm, name)(out, inp)
        return {"data": out.detach().clone()}
    world._error(me, M.both("not_offered", me=me, name=repr(str(name)[:40])))
    return {}


class RemoteComm:
    """Rank ``rank``'s ``comm`` in a world whose broker is another process (SimWorld.run_remote in
    the judge): each call is a message to it, and returns when the broker's world lets the rank go
    on. Offers what SimComm offers; which calls the exercise allows, and every check, is the broker's."""

    POST_AHEAD = 32  # calls posted without an answer before the rank waits for the broker

    def __init__(self, rank: int, world_size: int, ask, own: torch.Tensor | None = None) -> None:
        self._rank, self._world_size, self._ask, self._own = rank, world_size, ask, own
        self._works: dict[str, tuple] = {}  # id -> ("send" or "recv", tensor), until waited on
        self._count = 0
        self._posted: list[dict] = []  # calls whose answer the rank does not need, not yet sent

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._world_size

    def _call(self, name: str, *, needs_answer: bool = True, **fields) -> dict:
        """A call to the broker. One whose answer the rank does not need (a send, an isend or irecv
        being posted, the wait of an isend) is held back and sent with the next call that needs
        one (or when the rank returns): fewer round trips, and the same calls in the same order,
        each with the buffers as they were when it was made. A rank shares no memory with the
        others, so what it does before the broker performs them is invisible to them."""
        inflight = {
            k: _data(t) for k, (kind, t) in self._works.items() if kind == "send" and isinstance(t, torch.Tensor)
        }
        call = {"call": name, "where": _user_line(), "inflight": inflight, **fields}
        if not needs_answer and len(self._posted) < self.POST_AHEAD:
            self._posted.append(call)
            return {}
        batch, self._posted = self._posted + [call], []
        answer = self._ask(batch)
        if type(answer) is not dict or answer.get("stop"):
            raise _Stop
        return answer

    def _view(self, t) -> int:
        own = self._own
        if (
            isinstance(t, torch.Tensor)
            and own is not None
            and t.untyped_storage().data_ptr() == own.untyped_storage().data_ptr()
        ):
            return int(t.storage_offset() - own.storage_offset())
        return -1

    def _new(self, kind: str, t) -> str:
        self._count += 1
        key = str(self._count)
        self._works[key] = (kind, t)
        return key

    def send(self, tensor, dst) -> None:
        self._call(
            "send", needs_answer=False, t=_describe_tensor(tensor, True), peer=_plain_peer(dst), view=self._view(tensor)
        )

    def recv(self, tensor, src) -> None:
        _deliver_into(tensor, self._call("recv", t=_describe_tensor(tensor, False), peer=_plain_peer(src)))

    def isend(self, tensor, dst) -> "RemoteWork":
        key = self._new("send", tensor)
        self._call(
            "isend",
            needs_answer=False,
            id=key,
            t=_describe_tensor(tensor, True),
            peer=_plain_peer(dst),
            view=self._view(tensor),
        )
        return RemoteWork(self, key)

    def irecv(self, tensor, src) -> "RemoteWork":
        key = self._new("recv", tensor)
        self._call("irecv", needs_answer=False, id=key, t=_describe_tensor(tensor, False), peer=_plain_peer(src))
        return RemoteWork(self, key)

    def _wait(self, key: str) -> None:
        kind, t = self._works.pop(key, (None, None))
        answer = self._call("wait", needs_answer=kind != "send", id=key)
        if kind == "recv":
            _deliver_into(t, answer)

    def _poll(self, key: str) -> bool:
        return self._call("poll", id=key).get("done") is True

    def reduce_scatter_tensor(self, output, input) -> None:
        answer = self._call(
            "reduce_scatter_tensor", out=_describe_tensor(output, False), inp=_describe_tensor(input, True)
        )
        _deliver_into(output, answer)

    def all_gather_into_tensor(self, output, input) -> None:
        answer = self._call(
            "all_gather_into_tensor", out=_describe_tensor(output, False), inp=_describe_tensor(input, True)
        )
        _deliver_into(output, answer)

    def all_reduce(self, tensor, op=None) -> None:
        answer = self._call("all_reduce", inp=_describe_tensor(tensor, True), op=None if op is None else str(op))
        _deliver_into(tensor, answer)

    def _advance(self, ticks, kind: str, first: int) -> None:
        """Charge ``ticks`` (a Fraction) of stage work to this rank's clock in the broker's world
        (the pipeline harness's TimedStage; SimWorld.advance). Sent at once, with the calls held
        back before it, never held back itself: a charge performed after later sends would date
        them before the work that made them."""
        ticks = [int(ticks.numerator), int(ticks.denominator)]
        self._call("advance", ticks=ticks, label=[kind, first])

    def __repr__(self) -> str:
        return f"SimComm(rank={self.rank}, world_size={self.world_size})"


class RemoteWork:
    """The handle RemoteComm's ``isend``/``irecv`` return, like ``torch.distributed.Work``."""

    def __init__(self, comm: RemoteComm, key: str) -> None:
        self._comm, self._key = comm, key

    def wait(self, timeout=None) -> bool:
        self._comm._wait(self._key)
        return True

    def is_completed(self) -> bool:
        return self._comm._poll(self._key)


def _data(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to("cpu").contiguous().clone()


def _describe_tensor(t, with_data: bool) -> dict:
    if not isinstance(t, torch.Tensor):
        return {"type": type(t).__name__}
    out = {"shape": list(t.shape), "stride": list(t.stride()), "dtype": str(t.dtype).removeprefix("torch.")}
    if with_data:
        out["data"] = _data(t)
    return out


def _plain_peer(p):
    if type(p) in (int, bool):
        return p
    try:
        return {"repr": repr(p)[:80]}
    except Exception:  # noqa: BLE001 - the student's own object
        return {"repr": f"<a {type(p).__name__}>"}


def _deliver_into(t, answer: dict) -> None:
    data = answer.get("data")
    if isinstance(t, torch.Tensor) and isinstance(data, torch.Tensor):
        with torch.no_grad():
            t.copy_(data.reshape(t.shape).to(t.device))


def serve_rank(fn, rank: int, world_size: int, *, own: torch.Tensor | None = None):
    """Rank ``rank`` of a world whose broker is another process, run where the cell is: ``fn(comm)``
    runs in a thread of its own with a :class:`RemoteComm`, and this generator relays its calls:
    it yields each batch of calls the rank made (those it posted, then the one it waits on) and is
    sent the broker's answers (kit/subject.py and Subject.converse carry them). Returns
    ("done", what fn returned), ("raised", the exception) or ("stopped", None)."""
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    inbox: queue.SimpleQueue = queue.SimpleQueue()

    def ask(batch: list):
        outbox.put(("batch", batch))
        return inbox.get()

    def body() -> None:
        comm = RemoteComm(rank, world_size, ask, own)
        try:
            value = fn(comm)
            if comm._posted:  # calls still held back: the broker performs them before the rank is done
                batch, comm._posted = comm._posted, []
                outbox.put(("posted", batch))
            outbox.put(("done", value))
        except _Stop:
            outbox.put(("stopped", None))
        except BaseException as e:  # noqa: BLE001 - the student's code raised: the rank reports it
            if comm._posted:
                batch, comm._posted = comm._posted, []
                outbox.put(("posted", batch))
            outbox.put(("raised", e))

    thread = threading.Thread(target=body, daemon=True, name=f"sim-rank-{rank}")
    thread.start()
    try:
        while True:
            kind, item = outbox.get()
            if kind == "batch":
                inbox.put(_last((yield item)))
            elif kind == "posted":
                answers = yield item
                if _last(answers).get("stop"):
                    return "stopped", None
            else:
                return kind, item
    finally:
        if thread.is_alive():  # the broker left mid-call: unwind the rank
            inbox.put({"stop": True})


def _last(answers) -> dict:
    """The answer to a batch's last call, or a stop when any call of it was stopped."""
    if type(answers) is not list or not answers or any(type(a) is not dict or a.get("stop") for a in answers):
        return {"stop": True}
    return answers[-1]
