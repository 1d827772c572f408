"""A deterministic simulated process group: ranks one running at a time, as threads or as processes.

``SimWorld(world_size).run(fn)`` calls ``fn(rank, comm)`` on every rank, each in its own thread,
but only one rank runs at any moment: a rank gives up the processor at each ``comm`` call, and a
scheduling policy (``"stay"``, ``"round_robin"`` or a seeded ``"random"``) picks the next rank
among those that can move. The same program and policy therefore give the same interleaving, the
same messages and the same result on every run, however loaded the machine is.

``comm`` mirrors ``torch.distributed``'s point-to-point API (``send``/``recv``/``isend``/``irecv``,
``work.wait()``) with NCCL's semantics: a blocking ``send`` is a rendezvous that returns only once
the matching ``recv`` has been posted; messages between one pair of ranks match in posting order;
an ``isend`` buffer must stay untouched until its ``wait()`` returns, and an ``irecv`` buffer holds
the data only after its ``wait()``. Every element sent is counted per rank (``world.traffic``).

``comm.all_reduce(tensor)`` (in place, SUM or AVG), ``reduce_scatter_tensor`` and
``all_gather_into_tensor`` are rendezvous of all ranks. Every call a rank makes is also written to
``world.log`` (rank, call, elements, dtype, peer), so a harness can say exactly what was sent.

A logical clock (``world.clock``, one number per rank) measures schedules without wall time: a
harness charges work to a rank with ``world.advance(rank, ticks, label)`` (recorded in
``world.timeline``); a receive completes no earlier than the tick at which the matching send was
posted (a blocking ``recv`` when it is matched, an ``irecv`` in its ``wait()``), a collective at
the latest of its ranks' ticks; sending and receiving cost nothing. ``world.length()`` is the
largest tick any rank reached.

When no rank can move, the run stops at once with a :class:`Deadlock` that names what each rank
waits for, on which line, and the wait-for cycle. Misuse (a size mismatch, a buffer changed while
its send is in flight, a send nobody receives) stops it with a :class:`CommError` that says so.

Ranks in processes of their own (how the hidden bandwidth tests run it): ``SimWorld.run_remote``
is the world's broker, and each rank runs elsewhere with a ``RemoteComm`` that turns every call
into a message (the grading side's rank, kit/harnesses/procgroup_relay.py ``serve_rank``). Ranks
that are threads of one process share its memory: data could move between them outside ``comm``,
and the world's counts are in their reach. Ranks in separate processes can reach each other only
through the broker, which rebuilds every tensor from the message and observes exactly what
``run`` observes (the same interleaving, traffic, deadlocks and misuse: tests/test_collectives.py
compares the two on every catalogue answer).

This module is the world (``SimWorld``, ``SimComm``, ``Work``, ``Traffic``, the errors,
``run_ranks``); its private parts: ``_procgroup_relay`` (the broker's side of ``run_remote``;
``RemoteRankRaised``, re-exported here) and ``_procgroup_core``
(what both share: the unwinding signal and the student's line a call is charged to).
"""

from __future__ import annotations

import collections
import dataclasses
import random
import threading
from collections.abc import Callable
from typing import Any

import torch

# The parts: what the world and a relayed rank share, and the relayed rank (its public names are public here).
from ch13lib._procgroup_core import _Abort, _user_line
from ch13lib._procgroup_relay import RemoteRankRaised, _relay
from ch13lib.lang import Both, Messages

__all__ = [
    "CommError",
    "Deadlock",
    "RankError",
    "Traffic",
    "Work",
    "SimComm",
    "SimWorld",
    "run_ranks",
    "RemoteRankRaised",
]


# What the simulator says when a program misuses it, in the course's language (ch13lib/lang.py).
# A CommError's message is a Both (both sides, for a sentence that names the case around it).
M = Messages(
    not_offered=(
        "rank {rank} 调用了 comm.{name}, 本练习不提供它: 只能使用 {kind}",
        "rank {rank} called comm.{name}, which this exercise does not offer: use only {kind}",
    ),
    offer_p2p=("点对点调用", "point-to-point calls"),
    offer_and=("{a} 和 {b}", "{a} and {b}"),
    offer_nothing=("(什么也没有)", "nothing"),
    no_progress=(
        "{s} 秒没有进展: rank {r} 一直在运行却不调用 comm (死循环?)",
        "no progress for {s} s: rank {r} runs without calling comm (an endless loop?)",
    ),
    too_many_calls=(
        "一次运行中 comm 调用超过了 {n} 次: 一个永不结束的循环 (一直在轮询 is_completed()?)",
        "more than {n} comm calls in one run: a loop that never ends (polling is_completed() forever?)",
    ),
    not_tensor=(
        "rank {me} 调用 {call} 时传入的是 {type}, 不是 torch.Tensor",
        "rank {me} called {call} with a {type}, not a torch.Tensor",
    ),
    bad_peer=(
        "rank {me} 调用 {call} 时传入 {peer_name}={peer}: rank 是 0..{last} 的整数",
        "rank {me} called {call} with {peer_name}={peer}: ranks are ints 0..{last}",
    ),
    to_itself=(
        "rank {me} 调用 {call} 时传入 {peer_name}={peer}, 即它自己: torch.distributed 拒绝发给自己的消息 "
        "(改为在本地复制数据)",
        "rank {me} called {call} with {peer_name}={peer}, itself: torch.distributed refuses messages to yourself "
        "(copy the data locally instead)",
    ),
    non_contiguous=(
        "rank {me} 调用 {call} 时传入的张量不连续 (形状 {shape}, 步长 {strides}): torch.distributed 需要连续的张量",
        "rank {me} called {call} with a non-contiguous tensor (shape {shape}, strides {strides}): torch.distributed "
        "needs contiguous tensors",
    ),
    wait_recv=(
        "等待 rank {peer} 发出与之匹配的、来自 rank {me} 的 recv",
        "for rank {peer} to post a matching recv from rank {me}",
    ),
    wait_send=("等待 rank {peer} 向 rank {me} 发送", "for rank {peer} to send to rank {me}"),
    size_mismatch=(
        "大小不匹配: rank {src} 向 rank {dst} 发送了 {sent} ({swhere}), 但 rank {dst} 上与之匹配的 recv 只能容纳 "
        "{room} ({rwhere}); 两个 rank 之间的消息按发出的顺序匹配",
        "size mismatch: rank {src} sent {sent} to rank {dst} ({swhere}), but the matching recv on rank {dst} has "
        "room for {room} ({rwhere}); messages between two ranks match in the order they were posted",
    ),
    before_recv=("在与之匹配的 recv 发出之前", "before the matching recv was posted"),
    before_wait=("在它的 wait() 返回之前", "before its wait() returned"),
    buffer_changed=(
        "rank {src} {when}改动了它发给 rank {dst} 的 isend 的缓冲区 ({where}): 交给 isend 的缓冲区在 work.wait() "
        "返回之前属于通信库; 请使用单独的缓冲区 (或先 wait)",
        "rank {src} changed the buffer of its isend to rank {dst} ({where}) {when}: a buffer handed to isend "
        "belongs to the library until work.wait() returns; use a separate buffer (or wait first)",
    ),
    not_tensor_as=(
        "rank {me} 调用 {name} 时, {what} 传入的是 {type}, 不是 torch.Tensor",
        "rank {me} called {name} with a {type} as {what}, not a torch.Tensor",
    ),
    non_contiguous_as=(
        "rank {me} 调用 {name} 时 {what} 不连续: torch.distributed 需要连续的张量",
        "rank {me} called {name} with a non-contiguous {what}: torch.distributed needs contiguous tensors",
    ),
    bad_op=(
        "rank {me} 调用 all_reduce 时传入 op={op}: 这个模拟器只提供 SUM 和 AVG",
        "rank {me} called all_reduce with op={op}: this simulator offers SUM and AVG",
    ),
    bad_numel=(
        "rank {me} 调用 {name} 时 input 有 {n_in} 个元素, output 有 {n_out} 个: {big} 必须恰好有 world_size × "
        "{small} = {want} 个元素 (先把张量填充到 world_size 的倍数)",
        "rank {me} called {name} with input of {n_in} and output of {n_out} elements: the {big} must hold exactly "
        "world_size × {small} = {want} elements (pad the tensor to a multiple of world_size first)",
    ),
    bad_shape=(
        "rank {me} 调用 {name} 时 input 形状为 {s_in}, output 形状为 {s_out}: {big} 必须是 world_size 个分片沿第 0 维"
        "拼接而成, 形状 {want} (gloo 只接受这种形式; 稳妥起见请展平成一维张量)",
        "rank {me} called {name} with input of shape {s_in} and output of shape {s_out}: the {big} must be the "
        "world_size pieces concatenated along dim 0, shape {want} (gloo accepts only that form; flatten to 1-D "
        "tensors to be safe)",
    ),
    scalar_split=("(0 维张量无法切分)", "(a 0-d tensor cannot be split)"),
    two_dtypes=(
        "rank {me} 调用 {name} 时 input 是 {d_in}, output 是 {d_out}: 请使用同一种 dtype",
        "rank {me} called {name} with input {d_in} and output {d_out}: use one dtype",
    ),
    coll_call=("{name} (它的第 {k} 次集合通信调用)", "{name} (its collective call #{k})"),
    wait_coll=("等待其他每个 rank 做第 {k} 次集合通信调用", "for every other rank to make its collective call #{k}"),
    disagree=(
        "各 rank 的第 {k} 次集合通信调用不一致: {listing}。每个 rank 必须以相同的顺序做相同的集合通信调用",
        "the ranks disagree on collective call #{k}: {listing}. Every rank must make the same collective calls in "
        "the same order",
    ),
    input_of=("rank {r}: input 有 {what}", "rank {r}: input of {what}"),
    sizes=(
        "各 rank 的 {name} 调用 (第 {k} 次) 大小不同: {listing}",
        "the ranks' {name} calls (#{k}) have different sizes: {listing}",
    ),
    ops=(
        "各 rank 的 {name} 调用 (第 {k} 次) 使用了不同的 op: {listing}",
        "the ranks' {name} calls (#{k}) use different ops: {listing}",
    ),
    never_received=(
        "rank {src} 向 rank {dst} 发送了 {what} ({where}), 但 rank {dst} 从未发出与之匹配的 recv: 每个 send "
        "都恰好需要一个 recv",
        "rank {src} sent {what} to rank {dst} ({where}) but rank {dst} never posted a matching recv: every send "
        "needs exactly one recv",
    ),
    never_sent=(
        "rank {dst} 发出了一个来自 rank {src} 的 irecv ({where}), 但没有任何 send 与之匹配",
        "rank {dst} posted an irecv from rank {src} ({where}) that no send ever matched",
    ),
    call_counts=(
        "各 rank 做的集合通信调用次数不同 ({listing})",
        "the ranks made different numbers of collective calls ({listing})",
    ),
    deadlock=("死锁: 没有哪个 rank 能继续执行。", "deadlock: no rank can move."),
    returned=("  rank {r} 已经返回了", "  rank {r} has already returned"),
    blocked=(
        "  rank {r} 阻塞在 {what} ({where}), {why}{note}",
        "  rank {r} is blocked in {what} at {where}, waiting {why}{note}",
    ),
    peer_returned=(" (但 rank {peer} 已经返回了)", " (but rank {peer} has already returned)"),
    cycle=("  等待环: {cycle}", "  wait-for cycle: {cycle}"),
    elements_one=("{n} 个 {dtype} 元素", "{n} {dtype} element"),
    elements_many=("{n} 个 {dtype} 元素", "{n} {dtype} elements"),
)


class CommError(Exception):
    """The program misused the process group; the message says how."""


class Deadlock(CommError):
    """No rank can move: every unfinished rank waits for another."""


class RankError(CommError):
    """Rank ``rank`` raised ``exc`` (the original exception, with its traceback)."""

    def __init__(self, rank: int, exc: BaseException) -> None:
        super().__init__(f"rank {rank} raised {type(exc).__name__}: {exc}")
        self.rank = rank
        self.exc = exc


@dataclasses.dataclass
class Traffic:
    """What one rank put on the wire."""

    sent_elements: int = 0
    sent_bytes: int = 0
    sent_messages: int = 0
    received_elements: int = 0


@dataclasses.dataclass(eq=False)
class _Msg:
    kind: str  # "send" or "recv"
    src: int
    dst: int
    tensor: torch.Tensor
    blocking: bool
    where: str
    snapshot: torch.Tensor | None = None  # a send's data as it was posted
    staged: torch.Tensor | None = None  # an irecv's data, delivered by wait()
    tick: Any = 0  # a send: the sender's logical clock when it was posted
    staged_tick: Any = 0  # an irecv: the matching send's tick, applied by wait()
    matched: bool = False
    delivered: bool = False


@dataclasses.dataclass
class _Wait:
    ready: Callable[[], bool]
    what: str  # "send(to rank 1)"
    waits_on: list[int]  # the ranks that could unblock it
    why: str  # "for rank 1 to post a matching recv"
    where: str


def _describe(t: torch.Tensor) -> Both:
    key = "elements_one" if t.numel() == 1 else "elements_many"
    return M.both(key, n=t.numel(), dtype=str(t.dtype).replace("torch.", ""))


class Work:
    """The handle ``isend``/``irecv`` return, like ``torch.distributed.Work``."""

    def __init__(self, world: "SimWorld", rank: int, msg: _Msg) -> None:
        self._world, self._rank, self._msg = world, rank, msg

    def wait(self, timeout: Any = None) -> bool:
        self._world._wait_work(self._rank, self._msg)
        return True

    def is_completed(self) -> bool:
        return self._world._poll_work(self._rank, self._msg)


class SimComm:
    """One rank's view of the world. ``p2p``/``collectives``/``all_reduce`` choose which calls it offers."""

    def __init__(
        self, world: "SimWorld", rank: int, *, p2p: bool = True, collectives: bool = False, all_reduce: bool = False
    ):
        self._world, self._rank = world, rank
        self._p2p, self._collectives, self._all_reduce = p2p, collectives, all_reduce

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._world.world_size

    def _need(self, allowed: bool, name: str) -> None:
        if not allowed:
            offered = ([M.both("offer_p2p")] if self._p2p else []) + (
                ["reduce_scatter_tensor", "all_gather_into_tensor"] if self._collectives else []
            )
            offered += ["all_reduce"] if self._all_reduce else []
            kind = offered[0] if offered else M.both("offer_nothing")
            for more in offered[1:]:  # "a and b and c", as before
                kind = M.both("offer_and", a=kind, b=more)
            self._world._error(self._rank, M.both("not_offered", rank=self._rank, name=name, kind=kind))

    def send(self, tensor: torch.Tensor, dst: int) -> None:
        self._need(self._p2p, "send")
        self._world._send(self._rank, tensor, dst, blocking=True)

    def recv(self, tensor: torch.Tensor, src: int) -> None:
        self._need(self._p2p, "recv")
        self._world._recv(self._rank, tensor, src, blocking=True)

    def isend(self, tensor: torch.Tensor, dst: int) -> Work:
        self._need(self._p2p, "isend")
        return self._world._send(self._rank, tensor, dst, blocking=False)

    def irecv(self, tensor: torch.Tensor, src: int) -> Work:
        self._need(self._p2p, "irecv")
        return self._world._recv(self._rank, tensor, src, blocking=False)

    def reduce_scatter_tensor(self, output: torch.Tensor, input: torch.Tensor) -> None:
        """Like ``dist.reduce_scatter_tensor``: ``input`` holds world_size equal blocks; rank r's
        ``output`` receives the elementwise sum over ranks of block r."""
        self._need(self._collectives, "reduce_scatter_tensor")
        self._world._collective(self._rank, "reduce_scatter_tensor", output, input)

    def all_gather_into_tensor(self, output: torch.Tensor, input: torch.Tensor) -> None:
        """Like ``dist.all_gather_into_tensor``: ``output`` receives every rank's ``input``, in rank order."""
        self._need(self._collectives, "all_gather_into_tensor")
        self._world._collective(self._rank, "all_gather_into_tensor", output, input)

    def all_reduce(self, tensor: torch.Tensor, op: Any = None) -> None:
        """Like ``dist.all_reduce``: ``tensor`` becomes, in place, the sum over ranks (``op``: SUM, the
        default, or AVG, as ``dist.ReduceOp`` or a string)."""
        self._need(self._all_reduce, "all_reduce")
        self._world._collective(self._rank, "all_reduce", tensor, tensor, op=op)

    def __repr__(self) -> str:
        return f"SimComm(rank={self.rank}, world_size={self.world_size})"


class SimWorld:
    """A world of ``world_size`` simulated ranks. Use each world for one ``run``."""

    POLICIES = ("stay", "round_robin", "random")

    def __init__(
        self, world_size: int, *, policy: str = "stay", seed: int = 0, max_calls: int = 20_000, guard_s: float = 60.0
    ) -> None:
        if world_size < 1:
            raise ValueError("world_size must be at least 1")
        if policy not in self.POLICIES:
            raise ValueError(f"policy must be one of {self.POLICIES}")
        self.world_size = world_size
        self.policy = policy
        self.traffic = [Traffic() for _ in range(world_size)]
        self._rng = random.Random(seed)
        self._max_calls = max_calls
        self._guard_s = guard_s  # a hang guard for code that never calls comm; not a budget
        lock = threading.RLock()  # the world's lock, shared by its conditions
        self._cv = threading.Condition(lock)  # run() waits on it
        # each rank waits for its turn on a condition of its own: a switch wakes the rank chosen,
        # not every rank (with ranks in other processes each wake-up is a relay thread's)
        self._turns = [threading.Condition(lock) for _ in range(world_size)]
        self._current: int | None = None
        self._done = [False] * world_size
        self._waits: dict[int, _Wait] = {}
        self._failure: CommError | None = None
        self._calls = 0
        self._sends: dict[tuple[int, int], collections.deque] = collections.defaultdict(collections.deque)
        self._recvs: dict[tuple[int, int], collections.deque] = collections.defaultdict(collections.deque)
        self._posted_sends: list[_Msg] = []
        self._posted_recvs: list[_Msg] = []
        self._coll_seq = [0] * world_size
        self._coll: dict[int, dict] = {}
        self._used = False
        self.clock: list = [0] * world_size  # logical ticks per rank (see advance)
        self.timeline: list[tuple] = []  # (rank, start tick, end tick, label) of every advance
        self.flow: list | None = None  # a relayed world's data flow, when asked for (run_remote)
        self.log: list[dict] = []  # every comm call: rank, call, numel, dtype, peer, op

    # ---- running ---------------------------------------------------------------------------
    def run(
        self,
        fn: Callable[[int, SimComm], Any],
        *,
        p2p: bool = True,
        collectives: bool = False,
        all_reduce: bool = False,
    ) -> list:
        """Call ``fn(rank, comm)`` on every rank; return their results in rank order.
        Raises :class:`Deadlock`, :class:`RankError` or :class:`CommError` when the run fails."""
        if self._used:
            raise RuntimeError("a SimWorld runs once; make a new one")
        self._used = True
        results: list = [None] * self.world_size
        threads = []
        for r in range(self.world_size):
            comm = SimComm(self, r, p2p=p2p, collectives=collectives, all_reduce=all_reduce)
            t = threading.Thread(target=self._body, args=(r, fn, comm, results), daemon=True, name=f"sim-rank-{r}")
            threads.append(t)
        with self._cv:
            self._current = self._choose(list(range(self.world_size)), None)
        for t in threads:
            t.start()
        with self._cv:
            while not all(self._done) and self._failure is None:
                before = self._calls
                if (
                    not self._cv.wait(timeout=self._guard_s)
                    and self._calls == before
                    and not all(self._done)
                    and self._failure is None
                ):
                    self._failure = CommError(M.both("no_progress", s=f"{self._guard_s:g}", r=self._current))
                    self._notify()
            if self._failure is None:
                self._check_leftovers()
        for t in threads:
            t.join(timeout=2.0)
        if self._failure is not None:
            raise self._failure
        return results

    def run_remote(
        self,
        conversations: list,
        finish=None,
        *,
        p2p: bool = True,
        collectives: bool = False,
        all_reduce: bool = False,
    ) -> list:
        """Run a world whose ranks live in other processes (one each: they share no memory).

        ``conversations[r]`` is rank r's: a generator that yields each call rank r makes (a
        ``RemoteComm`` message, relayed by ``serve_rank`` in that process: kit/harnesses/procgroup_relay.py) and is sent
        the answer; ``finish(r, what it returned)`` is rank r's result, and may raise (the rank
        failed: the world fails with it, as when a thread of :meth:`run` raises). Rank r's thread
        here relays its calls to this world, so the ranks run one at a time exactly as in
        :meth:`run`, and everything :meth:`run` observes (traffic, the call log, deadlocks,
        misuse) is observed here, from the messages alone. ``self.sends``: every send as [rank,
        its n-th send, to rank, elements, the first element of the rank's own tensor it covers or
        -1]. When the world fails, each rank still in a call is told to stop; ``self.finals[r]``:
        what rank r's conversation returned. ``self.flow``, if set to a list before: each rank's
        data flow in the order the rank made its calls, as (rank, "F" or "B", ticks) for a clock
        charge, (rank, "put", to rank, tensor) for a send when posted and (rank, "got", from rank,
        tensor) for a receive when the rank is handed its data (the pipeline's schedule check:
        parallel_cases.dataflow_problem)."""
        self.sends: list[list] = []
        self.finals: list = [None] * self.world_size
        finish = finish or (lambda r, value: value)
        return self.run(
            lambda r, comm: _relay(self, r, comm, conversations[r], finish),
            p2p=p2p,
            collectives=collectives,
            all_reduce=all_reduce,
        )

    def _body(self, r: int, fn, comm: SimComm, results: list) -> None:
        with self._cv:
            while self._current != r and self._failure is None:
                self._turns[r].wait()
            if self._failure is not None:
                self._done[r] = True
                return
        try:
            results[r] = fn(r, comm)
        except _Abort:
            pass
        except BaseException as e:  # the student's code raised: the world fails with it
            with self._cv:
                if self._failure is None:
                    self._failure = RankError(r, e)
                self._notify()
        with self._cv:
            self._done[r] = True
            if self._failure is None:
                self._switch(r)
            self._notify()

    def _notify(self) -> None:
        """Wake the rank whose turn it is; every rank, and run(), once the world has failed or ended
        (cv held). run() needs no other wake-up: its hang guard counts calls, not wake-ups."""
        if self._failure is not None or self._current is None or all(self._done):
            self._cv.notify_all()
        if self._failure is not None or self._current is None:
            for turn in self._turns:
                turn.notify_all()
        else:
            self._turns[self._current].notify_all()

    def _choose(self, candidates: list[int], me: int | None) -> int:
        if self.policy == "stay":
            return me if me in candidates else min(candidates)
        if self.policy == "round_robin":
            start = -1 if me is None else me
            return min(candidates, key=lambda c: (c - start - 1) % self.world_size)
        return self._rng.choice(sorted(candidates))

    def _runnable(self) -> list[int]:
        return [
            r for r in range(self.world_size) if not self._done[r] and (r not in self._waits or self._waits[r].ready())
        ]

    def _switch(self, me: int) -> None:
        """Hand the processor to the next rank that can move (cv held)."""
        cands = self._runnable()
        if not cands:
            if not all(self._done):
                self._failure = Deadlock(self._deadlock_report())
            self._current = None
        else:
            self._current = self._choose(cands, me)
        self._notify()

    def _block(self, me: int, ready: Callable[[], bool], what: str, waits_on: list[int], why: str) -> None:
        """A scheduling point: wait until ``ready()`` and this rank is chosen (cv held)."""
        if self._failure is not None:
            raise _Abort
        self._calls += 1
        if self._calls > self._max_calls:
            self._error(me, M.both("too_many_calls", n=self._max_calls))
        self._waits[me] = _Wait(ready, what, waits_on, why, _user_line())
        self._switch(me)
        while self._current != me and self._failure is None:
            self._turns[me].wait()
        self._waits.pop(me, None)
        if self._failure is not None:
            raise _Abort

    def _error(self, me: int, message: Both):
        """Fail the whole world with ``message`` (from rank ``me``'s thread) and unwind."""
        with self._cv:
            if self._failure is None:
                self._failure = CommError(message)
            self._notify()
        raise _Abort

    # ---- the logical clock and the call log -------------------------------------------------
    def advance(self, rank: int, ticks, label: str = "") -> None:
        """Charge ``ticks`` of work to ``rank`` (a harness calls it from that rank's thread)."""
        with self._cv:
            start = self.clock[rank]
            self.clock[rank] = start + ticks
            self.timeline.append((rank, start, self.clock[rank], label))

    def length(self):
        """The schedule's length: the largest tick any rank reached."""
        return max(self.clock)

    def _note(self, me: int, call: str, t, peer=None, op=None) -> None:
        if isinstance(t, torch.Tensor):
            self.log.append(
                {
                    "rank": me,
                    "call": call,
                    "numel": int(t.numel()),
                    "dtype": str(t.dtype).replace("torch.", ""),
                    "peer": peer if isinstance(peer, int) else None,
                    "op": op,
                    # where the tensor lives: which part of a rank's own tensor a message was (a picture)
                    "storage": t.untyped_storage().data_ptr(),
                    "offset": int(t.storage_offset()),
                }
            )

    # ---- point to point --------------------------------------------------------------------
    def _check_tensor(self, me: int, t, call: str, peer: int, peer_name: str) -> None:
        if not isinstance(t, torch.Tensor):
            self._error(me, M.both("not_tensor", me=me, call=call, type=type(t).__name__))
        if not isinstance(peer, int) or isinstance(peer, bool) or not 0 <= peer < self.world_size:
            self._error(
                me, M.both("bad_peer", me=me, call=call, peer_name=peer_name, peer=repr(peer), last=self.world_size - 1)
            )
        if peer == me:
            self._error(me, M.both("to_itself", me=me, call=call, peer_name=peer_name, peer=peer))
        if not t.is_contiguous():
            self._error(me, M.both("non_contiguous", me=me, call=call, shape=tuple(t.shape), strides=t.stride()))

    def _send(self, me: int, tensor, dst, *, blocking: bool):
        call = f"{'send' if blocking else 'isend'}(to rank {dst})"
        self._check_tensor(me, tensor, call, dst, "dst")
        with self._cv:
            self._note(me, "send" if blocking else "isend", tensor, dst)
            msg = _Msg("send", me, dst, tensor, blocking, _user_line(), snapshot=tensor.detach().clone())
            msg.tick = self.clock[me]
            tr = self.traffic[me]
            tr.sent_elements += tensor.numel()
            tr.sent_bytes += tensor.numel() * tensor.element_size()
            tr.sent_messages += 1
            self._posted_sends.append(msg)
            self._sends[(me, dst)].append(msg)
            self._match(me, me, dst)
            if blocking:
                self._block(me, lambda: msg.matched, call, [dst], M.both("wait_recv", peer=dst, me=me))
                return None
            self._block(me, lambda: True, call, [], "")
            return Work(self, me, msg)

    def _recv(self, me: int, tensor, src, *, blocking: bool):
        call = f"{'recv' if blocking else 'irecv'}(from rank {src})"
        self._check_tensor(me, tensor, call, src, "src")
        with self._cv:
            self._note(me, "recv" if blocking else "irecv", tensor, src)
            msg = _Msg("recv", src, me, tensor, blocking, _user_line())
            self._posted_recvs.append(msg)
            self._recvs[(src, me)].append(msg)
            self._match(me, src, me)
            if blocking:
                self._block(me, lambda: msg.matched, call, [src], M.both("wait_send", peer=src, me=me))
                return None
            self._block(me, lambda: True, call, [], "")
            return Work(self, me, msg)

    def _match(self, me: int, src: int, dst: int) -> None:
        sends, recvs = self._sends[(src, dst)], self._recvs[(src, dst)]
        while sends and recvs:
            s, r = sends.popleft(), recvs.popleft()
            if s.tensor.numel() != r.tensor.numel() or s.tensor.dtype != r.tensor.dtype:
                self._error(
                    me,
                    M.both(
                        "size_mismatch",
                        src=src,
                        dst=dst,
                        sent=_describe(s.tensor),
                        swhere=s.where,
                        room=_describe(r.tensor),
                        rwhere=r.where,
                    ),
                )
            self._check_unchanged(me, s, M.both("before_recv"))
            data = s.snapshot
            s.matched = r.matched = True
            self.traffic[dst].received_elements += data.numel()
            if r.blocking:  # the receiver is blocked in recv (or is this thread): it completes now
                self._deliver(r, data)
                self.clock[dst] = max(self.clock[dst], s.tick)
            else:
                r.staged = data
                r.staged_tick = s.tick

    def _deliver(self, r: _Msg, data: torch.Tensor) -> None:
        with torch.no_grad():
            r.tensor.copy_(data.reshape(r.tensor.shape).to(r.tensor.device))
        r.delivered = True

    def _check_unchanged(self, me: int, s: _Msg, when: Both) -> None:
        if s.blocking:
            return
        same = (
            s.tensor.shape == s.snapshot.shape
            and s.tensor.dtype == s.snapshot.dtype
            and torch.equal(s.tensor.detach(), s.snapshot)
        )
        if not same:
            self._error(me, M.both("buffer_changed", src=s.src, dst=s.dst, where=s.where, when=when))

    def _wait_work(self, me: int, msg: _Msg) -> None:
        with self._cv:
            if msg.kind == "send":
                self._block(
                    me,
                    lambda: msg.matched,
                    f"isend(to rank {msg.dst}).wait()",
                    [msg.dst],
                    M.both("wait_recv", peer=msg.dst, me=me),
                )
                self._check_unchanged(me, msg, M.both("before_wait"))
            else:
                self._block(
                    me,
                    lambda: msg.matched,
                    f"irecv(from rank {msg.src}).wait()",
                    [msg.src],
                    M.both("wait_send", peer=msg.src, me=me),
                )
                if not msg.delivered:
                    self._deliver(msg, msg.staged)
                    self.clock[me] = max(self.clock[me], msg.staged_tick)

    def _poll_work(self, me: int, msg: _Msg) -> bool:
        with self._cv:
            self._block(me, lambda: True, "is_completed()", [], "")
            return msg.matched

    # ---- collectives (reduce_scatter_tensor, all_gather_into_tensor) ------------------------
    def _collective(self, me: int, name: str, output, input, op: Any = None) -> None:
        for t, what in ((output, "output"), (input, "input")):
            if not isinstance(t, torch.Tensor):
                self._error(me, M.both("not_tensor_as", me=me, name=name, type=type(t).__name__, what=what))
            if not t.is_contiguous():
                self._error(me, M.both("non_contiguous_as", me=me, name=name, what=what))
        w = self.world_size
        op_name = None
        if name == "all_reduce":
            op_name = "SUM" if op is None else str(op).split(".")[-1].upper()
            if op_name not in ("SUM", "AVG"):
                self._error(me, M.both("bad_op", me=me, op=repr(op)))
            with self._cv:
                self._note(me, name, input, op=op_name)
            return self._rendezvous(me, name, output, input, op_name, 2 * (w - 1) * -(-input.numel() // w))
        big, small = (input, output) if name == "reduce_scatter_tensor" else (output, input)
        if big.numel() != w * small.numel():
            self._error(
                me,
                M.both(
                    "bad_numel",
                    me=me,
                    name=name,
                    n_in=input.numel(),
                    n_out=output.numel(),
                    big="input" if big is input else "output",
                    small=small.numel(),
                    want=w * small.numel(),
                ),
            )
        if small.dim() == 0 or tuple(big.shape) != (w * small.shape[0], *small.shape[1:]):
            want = (w * small.shape[0], *small.shape[1:]) if small.dim() else M.both("scalar_split")
            self._error(
                me,
                M.both(
                    "bad_shape",
                    me=me,
                    name=name,
                    s_in=tuple(input.shape),
                    s_out=tuple(output.shape),
                    big="input" if big is input else "output",
                    want=want,
                ),
            )
        if input.dtype != output.dtype:
            self._error(me, M.both("two_dtypes", me=me, name=name, d_in=input.dtype, d_out=output.dtype))
        with self._cv:
            self._note(me, name, small)
        self._rendezvous(me, name, output, input, op_name, (w - 1) * small.numel())

    def _rendezvous(self, me: int, name: str, output, input, op_name, sent: int) -> None:
        """Wait for every rank's call #k; the last one to arrive completes it for all."""
        w = self.world_size
        with self._cv:
            k = self._coll_seq[me]
            self._coll_seq[me] += 1
            slot = self._coll.setdefault(k, {"calls": {}, "done": False})
            slot["calls"][me] = (name, output, input, _user_line(), op_name)
            self.traffic[me].sent_elements += sent  # what a ring would send
            self.traffic[me].sent_bytes += sent * input.element_size()
            self.traffic[me].sent_messages += w - 1
            if len(slot["calls"]) == w:
                self._complete_collective(me, k, slot)
            missing = lambda: [r for r in range(w) if r not in slot["calls"]]
            self._block(
                me,
                lambda: slot["done"],
                M.both("coll_call", name=name, k=k + 1),
                missing(),
                M.both("wait_coll", k=k + 1),
            )

    def _complete_collective(self, me: int, k: int, slot: dict) -> None:
        calls = slot["calls"]
        names = {c[0] for c in calls.values()}
        if len(names) > 1:
            listing = "; ".join(f"rank {r}: {calls[r][0]} ({calls[r][3]})" for r in sorted(calls))
            self._error(me, M.both("disagree", k=k + 1, listing=listing))
        name = names.pop()
        sizes = {(calls[r][2].numel(), calls[r][2].dtype) for r in calls}
        if len(sizes) > 1:
            each = [M.both("input_of", r=r, what=_describe(calls[r][2])) for r in sorted(calls)]
            listing = Both("; ".join(e[0] for e in each), "; ".join(e[1] for e in each))
            self._error(me, M.both("sizes", name=name, k=k + 1, listing=listing))
        ops = {calls[r][4] for r in calls}
        if len(ops) > 1:
            listing = "; ".join(f"rank {r}: op {calls[r][4]}" for r in sorted(calls))
            self._error(me, M.both("ops", name=name, k=k + 1, listing=listing))
        w = self.world_size
        latest = max(self.clock[q] for q in calls)  # every rank waits in this call: no clock moves meanwhile
        for r in calls:
            self.clock[r] = latest
        with torch.no_grad():
            if name == "all_reduce":
                total = calls[0][2].detach().clone()
                for r in range(1, w):
                    total += calls[r][2].detach().to(total.device)
                if ops.pop() == "AVG":
                    total = total / w if total.is_floating_point() else total // w
                for r in range(w):
                    calls[r][1].copy_(total.to(calls[r][1].device))
            elif name == "reduce_scatter_tensor":
                total = calls[0][2].detach().reshape(-1).clone()
                for r in range(1, w):
                    total += calls[r][2].detach().reshape(-1).to(total.device)
                c = calls[0][1].numel()
                for r in range(w):
                    out = calls[r][1]
                    out.copy_(total[r * c : (r + 1) * c].reshape(out.shape).to(out.device))
            else:
                full = torch.cat([calls[r][2].detach().reshape(-1).to(calls[0][2].device) for r in range(w)])
                for r in range(w):
                    out = calls[r][1]
                    out.copy_(full.reshape(out.shape).to(out.device))
        slot["done"] = True

    # ---- reports ------------------------------------------------------------------------------
    def _check_leftovers(self) -> None:
        for s in self._posted_sends:
            if not s.matched:
                self._failure = CommError(
                    M.both("never_received", src=s.src, dst=s.dst, what=_describe(s.tensor), where=s.where)
                )
                return
        for r in self._posted_recvs:
            if not r.matched:
                self._failure = CommError(M.both("never_sent", dst=r.dst, src=r.src, where=r.where))
                return
        seqs = set(self._coll_seq)
        if len(seqs) > 1:
            listing = ", ".join(f"rank {r}: {n}" for r, n in enumerate(self._coll_seq))
            self._failure = CommError(M.both("call_counts", listing=listing))

    def _deadlock_report(self) -> Both:
        """The report, one line per rank, as a Both: each language's lines together."""
        lines = [M.both("deadlock")]
        for r in range(self.world_size):
            if self._done[r]:
                lines.append(M.both("returned", r=r))
                continue
            w = self._waits.get(r)
            if w is None:
                continue
            peers = [p for p in w.waits_on if self._done[p]]
            note = M.both("peer_returned", peer=peers[0]) if peers else ""
            lines.append(M.both("blocked", r=r, what=w.what, where=w.where, why=w.why, note=note))
        cycle = self._cycle()
        if cycle:
            lines.append(M.both("cycle", cycle=" -> ".join(f"rank {r}" for r in cycle)))
        return Both("\n".join(line[0] for line in lines), "\n".join(line[1] for line in lines))

    def _cycle(self) -> list[int]:
        for start in range(self.world_size):
            path, r = [], start
            while r not in path:
                w = self._waits.get(r)
                if w is None or not w.waits_on or self._done[r]:
                    break
                path.append(r)
                r = w.waits_on[0]
            else:
                return path[path.index(r) :] + [r]
        return []


def run_ranks(
    fn: Callable[[torch.Tensor, SimComm], Any],
    tensors: list[torch.Tensor],
    *,
    policy: str = "stay",
    seed: int = 0,
    p2p: bool = True,
    collectives: bool = False,
) -> SimWorld:
    """Run the collective ``fn(tensor, comm)`` with rank r's tensor ``tensors[r]``; return the world
    (for its ``traffic``). Raises what :meth:`SimWorld.run` raises."""
    world = SimWorld(len(tensors), policy=policy, seed=seed)
    world.run(lambda r, comm: fn(tensors[r], comm), p2p=p2p, collectives=collectives)
    return world
