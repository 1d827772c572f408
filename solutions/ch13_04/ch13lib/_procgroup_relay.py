"""Ranks in processes of their own (a part of :mod:`ch13lib.procgroup`): the broker's side.

``_relay`` and ``_perform``: rank r's thread of ``SimWorld.run_remote`` rebuilds every tensor from
the message and performs the call in the judge's world. The rank's side, which turns every call
into a message (``serve_rank`` and ``RemoteComm``), is grading-only and lives in the kit
(kit/harnesses/procgroup_relay.py, never released). Its own module because it changes with the
message format, not with the world's semantics: it reaches the world only through rank r's
``SimComm``, ``advance``, ``_error`` and the lists it fills (``sends``, ``flow``, ``finals``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import torch

from ch13lib._procgroup_core import _RELAYED, _Abort
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
    sends (the calls it made since its last answer: kit.harnesses.procgroup_relay.serve_rank), and answer each."""
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
