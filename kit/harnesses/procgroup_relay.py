"""The rank's side of a relayed world (notebooks 03 and 07): one rank of a world whose broker is the
judge (ch13lib.procgroup ``SimWorld.run_remote``), run in the grading subject beside the cell.

:func:`serve_rank` runs the rank's code in a thread with a :class:`RemoteComm`, which turns every
comm call into a message, and relays those messages as a talking harness (kit/subject.py,
``Subject.converse``); :func:`serve_report` is the report every rank harness sends back. The
broker's side, which rebuilds each tensor and performs the call, is ch13lib's
(``ch13lib._procgroup_relay``): the judge imports ch13lib, and this module only grading needs.
"""

from __future__ import annotations

import linecache
import os
import queue
import sys
import threading

import torch

from ch13lib import _procgroup_core
from ch13lib.collective_launch import own_traceback

# The frames a call is not charged to: ch13lib's (the simulators and the rank harnesses' helpers),
# this package's (the rank harnesses) and threading's; the first other frame is the student's line.
_SKIP = frozenset(
    {
        os.path.dirname(os.path.abspath(_procgroup_core.__file__)),
        os.path.dirname(os.path.abspath(__file__)),
        os.path.dirname(threading.__file__),
    }
)


def _user_line() -> str:
    """The innermost caller outside ch13lib, kit/harnesses and threading: the student's line (as
    ``ch13lib._procgroup_core._user_line`` finds it for a rank of the threads world)."""
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        d = os.path.dirname(os.path.abspath(name)) if os.path.isabs(name) else ""
        if d not in _SKIP:
            line = linecache.getline(name, f.f_lineno).strip()
            return f"line {f.f_lineno}" + (f" `{line}`" if line else "")
        f = f.f_back
    return "?"


class _Stop(BaseException):
    """Unwinds a remote rank whose world ended (raised in the student's code by RemoteComm)."""


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


def serve_report(body, rank: int, world_size: int, *, own=None):
    """Rank ``rank`` of a relayed world, as a talking harness: ``body(comm)`` with a RemoteComm
    (:func:`serve_rank`). Returns what ``body`` returned (the rank's report), ``{"raised": its
    traceback}`` or ``{"stopped": True}`` (the world failed elsewhere); the stub's
    NotImplementedError propagates."""
    kind, item = yield from serve_rank(body, rank, world_size, own=own)
    if kind == "raised":
        if isinstance(item, NotImplementedError):
            raise NotImplementedError
        return {"raised": own_traceback(item)}
    if kind == "stopped":
        return {"stopped": True}
    return item
