"""Simulated threads and the run (a part of :mod:`ch13lib.sched`).

A :class:`Run` is one execution of the scenario under one schedule: its simulated threads
(:class:`_Sim`, real OS threads that run only while they hold the baton), the choice at every
scheduling point, the tracer that finds those points in your code (with the tables of
``_sched_code``), the lockset rule, the virtual clock, the failures it can end in and the story it
records. The models (``_sched_models``) call into the run in progress; the search over schedules is
in ``sched``.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import linecache
import re
import sys
import types

from ch13lib._sched_code import (
    _ATTR_OPS,
    _CALL_OPS,
    _CONTAINERS,
    _HARMLESS_CALLS,
    _IMMUTABLE,
    _MISSING,
    _NAME_OPS,
    _OPERATOR_OPS,
    _PLAIN_TYPES,
    _SCHED_FILES,
    _STDLIB_TRUSTED_FILES,
    _SUBSCR_OPS,
    _TRUSTED_CODE,
    _TRUSTED_MODULES,
    _chain_text,
    _eval_chain,
    _iterator_verdict,
    _line_text,
    _rebound,
    _static_get,
    _table,
    _trusted_frame,
)
from ch13lib._sched_models import Lock, RLock, Thread, _real_get_ident, _real_lock, _real_start, _Sync
from ch13lib.lang import Both, Messages, language

# What the scheduler tells a student, in the course's language (ch13lib/lang.py). The story's own
# lines (read/wrote/acquired ...: a trace of your code's steps) are told by STEPS below.
M = Messages(
    raised=("{name} 抛出了 {exc}", "{name} raised {exc}"),
    raised_at=("{name} 抛出了 {exc}: {text} (位置: {where})", "{name} raised {exc}: {text} (at {where})"),
    check_failed=("一项检查未通过", "a check failed"),
    not_yours=("(不在你的代码中)", "(not in your code)"),
    line=("第 {n} 行: {code}", "line {n}: {code}"),
    how=(
        "发生经过 (抢占 {n} 次{s}; 你的代码每执行一步占一行):",
        "How it happened ({n} preemption{s}; one line per step of your code):",
    ),
    livelock=(
        "没有进展: 执行 {steps} 步之后, 这些线程仍在运行 ({where})。靠自旋等待 (反复检查而不阻塞) 的循环"
        "在这里永远不会结束。",
        "no progress: after {steps} steps the threads were still running ({where}). A loop that waits by "
        "spinning (re-checking without blocking) never ends here.",
    ),
    running_at=("{name} 位于 {where}", "{name} at {where}"),
    deadlock=(
        "死锁: 所有线程都被阻塞, 没有任何线程能再唤醒其他线程。\n",
        "deadlock: every thread is blocked and none can ever wake the others.\n",
    ),
    blocked_at_exit=(
        "线程被遗留在阻塞状态: 程序已经结束, 但这些线程仍在等待, 而且再也没有谁能唤醒它们 (丢失的唤醒、"
        "缺少 release/notify, 或者 join 所等待的另一方缺失)。\n",
        "threads left blocked: the program was over but these threads were still waiting and nothing will "
        "ever wake them (a lost wakeup, a missing release/notify, or a missing join's counterpart).\n",
    ),
    cycle=(
        "等待环:\n    {cycle}\n -> 回到第一个\n各线程在哪里等待:\n",
        "The wait-for cycle:\n    {cycle}\n -> back to the first\nWho waits where:\n",
    ),
    cycle_step=(
        "{name} (位于 {where}) 等待 {lock}, 它被 {holder} 持有, 自 {since} 起",
        "{name} (at {where}) waits for {lock} held by {holder} since {since}",
    ),
    waits=("  {name} 等待 {what}, 位于 {where}", "  {name} waits for {what}, at {where}"),
    held_by=("{lock} (被 {holder} 持有)", "{lock} (held by {holder})"),
    nobody=("无人", "nobody"),
    refused_dunder=(
        "{name}: {what} 在运行时设置了类的 dunder 方法 (或创建了一个类) ({line}): 解释器从 C 中调用 dunder "
        "方法, 调度器看不到它们。请在 class 语句中用 def 来写。",
        "{name}: {what} sets a class's dunder method (or makes a class) at run time ({line}): the "
        "interpreter calls dunder methods from C, out of the scheduler's sight. Write them with def in a "
        "class statement.",
    ),
)


# The story's steps. The run records each as a verb of this table and its fields, in no language
# (:func:`step`); the trace is told in the language in force when it is printed (:func:`tell`).
STEPS = Messages(
    read=("读取 {what} = {value}", "read {what} = {value}"),
    read_it=("读取 {what}", "read {what}"),
    wrote=("写入 {what} = {value}", "wrote {what} = {value}"),
    wrote_it=("写入 {what}", "wrote {what}"),
    deleted=("删除 {what}", "deleted {what}"),
    entered=("进入 {name}", "entered {name}"),
    called=("调用 {what}(...)", "called {what}(...)"),
    iterated=("迭代 {what}", "iterated {what}"),
    spliced=("展开 {what}(...) 的参数", "spliced arguments of {what}(...)"),
    changed=("原地修改 {what}", "changed {what} in place"),
    ran=("执行 {what}", "ran {what}"),
    blocked=("阻塞: 等待 {what}", "blocked: {what}"),
    timed_out=("等待 ({what}) 超时, 此时 t={t}s", "timed out waiting ({what}) at t={t}s"),
    finished=("结束", "finished"),
    started=("启动了 {thread}", "started {thread}"),
    joined=("等到了 {thread} 结束 (join)", "joined {thread}"),
    sleeps=("休眠 {seconds} 秒", "sleeps {seconds}s"),
    acquired=("获得 {lock}", "acquired {lock}"),
    released=("释放 {lock}", "released {lock}"),
    acquired_sem=("获得 {sem} (值变为 {value})", "acquired {sem} (value now {value})"),
    released_sem=("释放 {sem} (值变为 {value})", "released {sem} (value now {value})"),
    waits=("在 {cond} 上等待 (释放了 {lock})", "waits on {cond} (released {lock})"),
    woke=("从 {cond} 被唤醒, 重新获得了 {lock}", "woke from {cond} and re-acquired {lock}"),
    notified=("通知了 {cond} 的 {n} 个等待者{s}", "notified {n} waiter{s} of {cond}"),
    in_library=("{step} (在 {inner} 中)", "{step} (in {inner})"),
    more=("省略了 {n} 步", "{n} more steps"),
    at=("第 {n} 行", "line {n}"),
    # the places the code tables name (_sched_code._drain_entry) when a trace tells them
    unpacking=("第 {n} 行的解包", "unpacking at line {n}"),
    splicing=("第 {n} 行的展开", "splicing at line {n}"),
    iterable=("第 {n} 行的可迭代对象", "the iterable at line {n}"),
    iterator=("第 {n} 行的迭代器", "the iterator at line {n}"),
    comprehension=("{name} 中的 .0", ".0 in {name}"),
)


def step(verb: str, **fields) -> tuple:
    """A step of the story as the run records it: a verb of STEPS and its fields (str, or
    :class:`Both` where a phrase has a side in each language), in no language."""
    return (verb, fields)


def trace_side() -> int:
    """Which language a trace is told in: Chinese under zh; English under en and under both, where
    the header above it says it in both languages and a trace told twice would double the feedback."""
    return 0 if language() == "zh" else 1


def told(act, side: int | None = None) -> str:
    """One recorded step (:func:`step`) in words, in the language of ``side`` (default: :func:`trace_side`)."""
    side = trace_side() if side is None else side
    verb, fields = act
    if verb == "in_library":
        fields = {**fields, "step": Both(told(fields["step"], 0), told(fields["step"], 1))}
    return STEPS.both(verb, **fields)[side]


_PLACE = re.compile(r"(unpacking|splicing|the iterable|the iterator) at line (\d+)|\.0 in (.+)", re.S)
_PLACES = {"unpacking": "unpacking", "splicing": "splicing", "the iterable": "iterable", "the iterator": "iterator"}


def _place(text: str) -> tuple | None:
    """The step that names a place a code table names in English ("unpacking at line 7",
    _sched_code._drain_entry), or None for code text (``self.items``)."""
    m = _PLACE.fullmatch(text)
    if m is None:
        return None
    if m.group(3) is not None:
        return step("comprehension", name=m.group(3))
    return step(_PLACES[m.group(1)], n=m.group(2))


def place(text: str) -> Both | str:
    """What a code table names (:func:`_place`) in each language; code text as it is."""
    act = _place(text)
    return text if act is None else STEPS.both(act[0], **act[1])


def tell(events, limit: int = 40) -> str:
    """The story: one line per recorded step (thread, your line, what it did), in the language in
    force; a long one keeps its first and last steps around a line saying how many were left out."""
    side = trace_side()
    out = []
    for e in _kept(events, limit):
        if e is None:
            out.append(f"  ... {STEPS.both('more', n=len(events) - limit + 1)[side]} ...")
            continue
        name, line, text, act = e
        if not line:
            loc = " " * 50
        elif side == 0:  # right-aligned: 第   7 行 and 第  16 行 line up
            loc = f"{STEPS.both('at', n=f'{line:>3}')[0]} {text[:40]:<40}"
        else:
            loc = f"{STEPS.both('at', n=f'{line:<3}')[1]} {text[:40]:<40}"
        out.append(f"  {name:<5} {loc}  {told(act, side)}")
    return "\n".join(out)


def rows(events, limit: int = 40) -> list:
    """The rows of :func:`tell` as plain data (for the swimlane picture): [thread, line, text,
    action], in the language in force; a skipped stretch as ["...", 0, "", "N more steps"]."""
    side = trace_side()
    return [
        ["...", 0, "", STEPS.both("more", n=len(events) - limit + 1)[side]]
        if e is None
        else [str(e[0]), int(e[1] or 0), str(e[2])[:60], told(e[3], side)[:80]]
        for e in _kept(events, limit)
    ]


def _kept(events, limit: int) -> list:
    """The steps a story tells: all, or its first 8 and last ``limit - 9`` around None (the rest)."""
    return list(events) if len(events) <= limit else [*events[:8], None, *events[-(limit - 9) :]]


def joined(parts, sep: str = "") -> Both:
    """Sentences and phrases (each a :class:`Both`, or a str the same in both languages) joined, in
    each language."""
    parts = [p if isinstance(p, Both) else Both(str(p), str(p)) for p in parts]
    return Both(sep.join(p[0] for p in parts), sep.join(p[1] for p in parts))


_LINE = re.compile(r"line (\d+): (.*)", re.S)


def located(where):
    """A place in your code, "line 12: x += 1" (_sched_code._line_text), in each language."""
    m = _LINE.fullmatch(where) if isinstance(where, str) else None
    return M.both("line", n=m.group(1), code=m.group(2)) if m else where


def plural(n: int) -> Both:
    """The English plural ending for ``n`` things (Chinese has none)."""
    return Both("", "" if n == 1 else "s")


def _park():
    """Block this OS thread for ever: its run is over (it failed) and it must not run on."""
    lk = _real_lock()
    lk.acquire()
    lk.acquire()


# An object's address as an int (a dict keyed by id(obj)): different on every run, so the story
# would be too. No value of these exercises is that large otherwise.
_ADDRESS = re.compile(r"(?<![\w.])\d{12,}(?![\w.])")


def _read(text: str, v) -> tuple:
    """The step that reads ``text``, with its value when it could be read statically."""
    return step("read", what=text, value=_short(v)) if v is not _MISSING else step("read_it", what=text)


def _short(v, limit=60) -> str:
    s = _ADDRESS.sub("<id>", _shown(v))
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _shown(v) -> str:
    try:
        if isinstance(v, (int, float, bool, str, type(None))):
            s = repr(v)
        elif isinstance(v, (list, tuple, dict, set, collections.deque)) and len(v) <= 8:
            s = repr(v)
        elif isinstance(v, (list, tuple, dict, set, collections.deque)):
            s = f"<{type(v).__name__} of {len(v)}>"
        elif isinstance(v, _Sync):
            s = v._label()
        else:
            s = object.__repr__(v) if type(v).__repr__ is object.__repr__ else repr(v)
            if " object at 0x" in s:
                s = f"<{type(v).__name__}>"
    except Exception:
        s = f"<{type(v).__name__}>"
    return s


# --------------------------------------------------------------------------------------------
# Simulated threads and the run
# --------------------------------------------------------------------------------------------


class _Sim:
    """One simulated thread: a real OS thread that runs only when it holds the baton."""

    def __init__(self, run: "Run", index: int, thread_obj, name: str) -> None:
        self.run = run
        self.index = index
        self.name = name
        self.thread = thread_obj
        self.go = _real_lock()
        self.go.acquire()
        self.done = False
        self.started = False
        self.os_ident = None
        self.waiting = None  # (description, object) while blocked
        self.cond = None  # callable: True when it may proceed
        self.deadline = None  # virtual time at which the wait times out
        self.timed_out = False
        self.settling = False
        self.pending = None  # a write to report after it happened (story mode)
        self.loops: dict = {}  # (id(frame), GET_ITER offset) -> (harmless, tuples, text): see _drain
        self.held: set = set()  # the locks it holds, by identity, not by a label the cell can set (lockset rule)
        # a vector clock of thread starts and joins: what of each thread happened before us
        self.vc: dict[int, int] = {index: 0}

    def waits(self) -> bool:
        """Blocked, and not yet due: its wait can only end early (a choice) or by its condition."""
        if self.cond is None or self.timed_out:
            return False
        if self.deadline is not None and self.deadline <= self.run.clock:
            return False
        return not self.cond()

    def enabled(self) -> bool:
        if self.done or not self.started:
            return False
        if self.cond is None:
            return True
        if self.timed_out:
            return True
        if self.deadline is not None and self.run.early_timeouts:
            return True  # its timeout may fire now: time passing is a choice too
        if self.deadline is not None and self.deadline <= self.run.clock:
            # its time has come: every sleeper due by now may run, in any order. Woken one at a
            # time, sleeps would order the threads like a lock
            return True
        if self.settling:
            return not any(t is not self and t.enabled() and not t.settling for t in self.run.threads)
        return bool(self.cond())


@dataclasses.dataclass
class Failure:
    """Why a run failed, and the interleaving that made it fail."""

    kind: str  # check | exception | deadlock | blocked_at_exit | livelock | hang | refused
    message: str  # what went wrong, in words (in the language in force; ``sides``: in each)
    schedule: str = ""  # pass to replay() to run exactly this interleaving again
    preemptions: int = 0
    steps: list = dataclasses.field(default_factory=list)  # the interleaving as recorded: Run.events
    blocked: list = dataclasses.field(default_factory=list)  # [(thread, what, line)] at the end
    exc: BaseException | None = None
    scenario: str = ""
    sides: tuple = ()  # the message in each language, (Chinese, English), when it has them

    def __post_init__(self) -> None:
        if isinstance(self.message, Both):
            self.say(self.message)

    def say(self, message) -> None:
        """Set the message (a :class:`Both`, or a str the same in both languages)."""
        self.sides = tuple(joined([message]))
        self.message = str(Both(*self.sides))

    def said(self) -> Both:
        """The message in each language."""
        return Both(*self.sides) if self.sides else Both(self.message, self.message)

    @property
    def story(self) -> str:
        """The interleaving, in your own lines, in the language in force (empty when not recorded)."""
        return tell(self.steps)

    @property
    def events(self) -> list:
        """The story's rows as data, in the language in force: [thread, line, text, action]."""
        return rows(self.steps)

    def told(self) -> str:
        """How it happened: the header, then the story (empty when there is none)."""
        if not self.steps:
            return ""
        return M("how", n=self.preemptions, s=plural(self.preemptions)) + "\n" + self.story

    def explain(self) -> str:
        return "\n".join([self.message] + ([self.told()] if self.steps else []))


@dataclasses.dataclass
class Report:
    schedules: int
    failure: Failure | None
    exhaustive: bool  # every schedule within max_preemptions was tried
    max_preemptions: int
    random_schedules: int
    seconds: float = 0.0
    threads: int = 0  # the most threads (besides main) any schedule started

    @property
    def ok(self) -> bool:
        return self.failure is None


class Run:
    """One execution of the scenario under one schedule."""

    def __init__(
        self,
        prefix,
        *,
        rng=None,
        record=False,
        traced=(),
        max_steps=20000,
        max_opcodes=500_000,
        switch_p=0.15,
        early_timeouts=False,
        racy=(),
        follow=None,
    ):
        self.early_timeouts = early_timeouts
        self.racy = set(racy)  # locations known to be accessed without a common lock
        self.new_racy: set = set()
        self.loc_state: dict = {}
        self.follow = list(follow) if follow is not None else None  # replay of a step trace
        self.all_points = follow is not None
        self.k = 0  # steps passed (follow mode)
        self.diverged = False
        self.preemptions = 0
        self.trace: list[int] = []  # which thread passed each potential point (record mode)
        self.prefix = list(prefix)
        self.rng = rng
        self.switch_p = switch_p
        self.record = record
        self.traced = set(traced)
        self.max_steps = max_steps
        self.max_opcodes = max_opcodes
        self.threads: list[_Sim] = []
        self.decisions: list[tuple] = []  # (enabled indices, current index or None, chosen index)
        self.current: _Sim | None = None
        self.clock = 0.0
        self.steps = 0
        self.opcodes = 0
        self.failure: Failure | None = None
        self.finished = False
        self.done = _real_lock()
        self.done.acquire()
        self.events: list[tuple] = []  # (thread name, line, text of line, step(...)): the story, recorded
        self.student_modules: set[str] = set()
        self.result = None
        self.sync_count = collections.Counter()
        self.spawned = 0
        self.made_threads = 0  # Thread objects made in this run (their hash)

    # ---- threads -------------------------------------------------------------------------
    def new_sim(self, thread_obj, name=None) -> _Sim:
        index = len(self.threads)
        sim = _Sim(self, index, thread_obj, name or ("main" if index == 0 else f"T{index}"))
        self.threads.append(sim)
        return sim

    def launch(self, sim: _Sim, body) -> None:
        run = self

        def bootstrap():
            sim.os_ident = _real_get_ident()
            sim.go.acquire()  # wait for the baton
            if run.finished:
                _park()
            sys.settrace(run._global_trace)
            try:
                body()
            except BaseException as e:  # noqa: BLE001 - any exception in any thread fails the run
                sys.settrace(None)
                if not run.finished:
                    run._thread_exception(sim, e)
                _park()
            sys.settrace(None)
            run._finish_thread(sim)

        sim.started = True
        _real_start(bootstrap, ())

    # ---- the baton -----------------------------------------------------------------------
    def _transfer(self, me: _Sim, nxt: _Sim) -> None:
        self.current = nxt
        nxt.go.release()
        me.go.acquire()
        if self.finished:
            _park()

    def _choose(self, me: _Sim | None, origin: _Sim | None = None) -> _Sim | None:
        enabled = [t for t in self.threads if t.enabled()]
        if not enabled:
            return None
        # a thread that just blocked does not "go on": its early timeout is a choice, never the
        # default (else a backoff loop's sleep would end at once for ever, starving the others)
        cur = me if (me is not None and me in enabled and not me.waits()) else None
        if self.follow is not None:
            want = self.follow[self.k] if self.k < len(self.follow) else None
            t = next((t for t in enabled if t.index == want), None)
            if t is None:
                if want is not None:
                    self.diverged = True
                t = cur if cur is not None else enabled[0]
            if t.cond is not None and t.deadline is not None and not t.timed_out and not t.cond():
                t.timed_out = True
                self.clock = max(self.clock, t.deadline)
            if cur is not None and t is not cur:
                self.preemptions += 1
            return t
        if len(enabled) == 1:
            t = enabled[0]
            if t.cond is not None and t.deadline is not None and not t.timed_out and not t.cond():
                t.timed_out = True
                self.clock = max(self.clock, t.deadline)
            return t
        i = len(self.decisions)
        chosen = None
        if i < len(self.prefix):
            want = self.prefix[i]
            chosen = next((t for t in enabled if t.index == want), None)
        if chosen is None and self.rng is not None and i >= len(self.prefix):
            if cur is None or self.rng.random() < self.switch_p:
                chosen = self.rng.choice(enabled)
        default = cur if cur is not None else self._round_robin(enabled, me or origin)
        if chosen is None:
            chosen = default
        self.decisions.append(
            (tuple(t.index for t in enabled), cur.index if cur else None, chosen.index, default.index)
        )
        if cur is not None and chosen is not cur:
            self.preemptions += 1
        if chosen.cond is not None and chosen.deadline is not None and not chosen.timed_out and not chosen.cond():
            chosen.timed_out = True  # an early timeout: the clock jumps to it
            self.clock = max(self.clock, chosen.deadline)
        return chosen

    def _user_call(self) -> bool:
        """Was this synchronisation call made by your code or the scenario (not by the stdlib,
        e.g. queue.Queue or concurrent.futures, on its behalf)? Only those are preemption points:
        the stdlib's internal locking is trusted, and still blocks when it must."""
        f = sys._getframe(2)
        while f is not None and f.f_code.co_filename in _SCHED_FILES:
            f = f.f_back
        if f is None:
            return False
        name = f.f_code.co_filename
        # stdlib code acts for you where it, or stdlib code that called it, is not trusted here (your
        # object, or ``_worker`` called by your cell: otherwise its lock calls would be no
        # preemption points)
        g = f
        while g is not None and g.f_code.co_filename in _STDLIB_TRUSTED_FILES:
            if not _trusted_frame(g):
                return True
            g = g.f_back
        return name in self.traced or name == "<scenario>"

    @staticmethod
    def _round_robin(enabled, after):
        """The default when the running thread blocks or ends: the next thread after it, in turn."""
        if after is None:
            return enabled[0]
        return next((t for t in enabled if t.index > after.index), enabled[0])

    def point(self, real: bool = True) -> None:
        """A scheduling point of the current thread: another thread may run first.

        ``real=False``: a potential point only (an access the lockset rule found harmless): no
        choice is made, but the step is counted in the trace (and is a point when replaying one)."""
        me = self.current
        self.steps += 1
        if self.steps > self.max_steps:
            self._fail_livelock(me)
        if real or self.follow is not None:
            nxt = self._choose(me)
            if nxt is not None and nxt is not me:
                self._transfer(me, nxt)
        self._passed(me)

    def _passed(self, me: _Sim) -> None:
        if self.follow is not None:
            self.k += 1
        if self.record:
            self.trace.append(me.index)

    def block(self, cond, deadline=None, waiting=("", None), point=False) -> bool:
        """Wait until ``cond()`` (True) or virtual time passes ``deadline`` (False).

        With ``point``, this is also a scheduling point when ``cond()`` already holds: another
        thread may run first (and may make ``cond()`` false again: then this one waits).
        """
        me = self.current
        if cond():
            if not point or not self._user_call():
                return True
        elif self.record:
            self._event(me, step("blocked", what=waiting[0]), depth=3)
        me.cond, me.deadline, me.waiting, me.timed_out = cond, deadline, waiting, False
        try:
            while True:
                self.steps += 1
                if self.steps > self.max_steps:
                    self._fail_livelock(me)
                nxt = self._choose(me)
                if nxt is None:
                    nxt = self._advance_clock(me)
                if nxt is not me:
                    self._transfer(me, nxt)
                if me.timed_out:
                    if self.record:
                        self._event(me, step("timed_out", what=waiting[0], t=f"{self.clock:g}"), depth=3)
                    self._passed(me)
                    return False
                if cond():
                    self._passed(me)
                    return True
        finally:
            me.cond, me.deadline, me.waiting, me.timed_out = None, None, None, False

    def _advance_clock(self, me: _Sim) -> _Sim:
        waiting = [t for t in self.threads if not t.done and t.started and t.deadline is not None]
        if not waiting:
            self._fail_stuck(me)
        t = min(waiting, key=lambda s: (s.deadline, s.index))
        self.clock = max(self.clock, t.deadline)
        t.timed_out = True
        return t

    def _finish_thread(self, sim: _Sim) -> None:
        if self.record:
            self._event(sim, step("finished"), depth=0, student=False)
        sim.done = True
        nxt = self._choose(None, origin=sim)
        if nxt is None:
            if all(t.done for t in self.threads):
                self.finished = True
                self.done.release()
                return
            nxt = self._advance_clock(sim)
        self.current = nxt
        nxt.go.release()

    # ---- failures ------------------------------------------------------------------------
    def _end(self, failure: Failure) -> None:
        if self.finished:
            _park()
        self.failure = failure
        self.finished = True
        self.done.release()
        _park()

    def _thread_exception(self, sim: _Sim, e: BaseException) -> None:
        self.failure = Failure("exception", "", exc=e)
        self.failure.say(M.both("raised", name=sim.name, exc=type(e).__name__))
        self.failure.blocked = [(sim.name, "raised", _exc_where(e, self.traced))]
        self.finished = True
        self.done.release()

    def _fail_livelock(self, me: _Sim) -> None:
        where = joined(
            [
                M.both("running_at", name=t.name, where=located(self._where(t)))
                for t in self.threads
                if not t.done and t.started
            ],
            ", ",
        )
        self._end(
            Failure(
                "livelock",
                M.both("livelock", steps=self.max_steps, where=where),
                blocked=[(t.name, "running", self._where(t)) for t in self.threads if not t.done and t.started],
            )
        )

    def _fail_stuck(self, me: _Sim) -> None:
        def what(t):
            if not t.waiting:
                return "?"
            obj = t.waiting[1]
            if isinstance(obj, (Lock, RLock)):  # who holds it now, not when the wait began
                holder = obj._holder.name if obj._holder else M.both("nobody")
                return M.both("held_by", lock=obj._label(), holder=holder)
            return t.waiting[0]

        blocked = [(t.name, what(t), self._where(t)) for t in self.threads if not t.done and t.started]
        main_done = self.threads[0].done
        kind = "blocked_at_exit" if main_done else "deadlock"
        cycle = self._cycle()
        lines = joined(
            [M.both("waits", name=name, what=what, where=located(where)) for name, what, where in blocked], "\n"
        )
        msg = [M.both(kind)]
        if cycle:
            msg.append(M.both("cycle", cycle=joined(cycle, "\n -> ")))
        self._end(Failure(kind, joined(msg + [lines]), blocked=blocked))

    def _cycle(self) -> list[Both]:
        """Threads waiting for a lock held by a thread waiting for a lock held by ... itself."""

        def holder(t):
            if t.waiting and isinstance(t.waiting[1], (Lock, RLock)):
                return t.waiting[1]._holder
            return None

        for start in self.threads:
            seen = []
            t = start
            while t is not None and t not in seen and not t.done:
                seen.append(t)
                t = holder(t)
            if t is not None and t in seen:
                cyc = seen[seen.index(t) :]
                out = []
                for s in cyc:
                    lk = s.waiting[1]
                    out.append(
                        M.both(
                            "cycle_step",
                            name=s.name,
                            where=located(self._where(s)),
                            lock=lk._label(),
                            holder=lk._holder.name,
                            since=located(lk._where or "?"),
                        )
                    )
                return out
        return []

    # ---- where are we: your lines ----------------------------------------------------------
    def _student_frame(self, frame):
        while frame is not None and frame.f_code.co_filename not in self.traced:
            frame = frame.f_back
        return frame

    def _where(self, t: _Sim) -> str | Both:
        frame = sys._current_frames().get(t.os_ident) if t.os_ident else None
        f = self._student_frame(frame)
        if f is None:
            return M.both("not_yours")
        return _line_text(f.f_code.co_filename, f.f_lineno)

    def _event(self, sim: _Sim, action: tuple, depth: int = 2, student=True) -> None:
        f = self._student_frame(sys._getframe(depth)) if depth else None
        if student and f is None:
            return
        line = f.f_lineno if f is not None else 0
        text = linecache.getline(f.f_code.co_filename, line).strip() if f is not None else ""
        self.events.append((sim.name, line, text, action))

    # ---- tracing your code -----------------------------------------------------------------
    def _global_trace(self, frame, event, arg):
        if event != "call":
            return None
        code = frame.f_code
        if code.co_filename not in self.traced:
            # Library code is watched like yours when your code (or library code it called) runs
            # it: a pure-Python read-modify-write (collections.Counter.update) is no more atomic
            # than yours. Our models, the scenario and the trusted stdlib are not.
            caller = frame.f_back
            if caller is None or _trusted_frame(frame) or self.finished:
                return None
            if code.co_filename.startswith(("<frozen importlib", "<frozen zipimport")):  # the import system
                return None  # (the other frozen modules, collections.abc's MutableMapping.update among
                # them, are library code like any: untraced, an update through one would go unseen)
            if caller.f_code.co_filename in self.traced:
                self._entered_library(caller, code)
            elif not getattr(caller.f_trace, "watched", False):
                return None
        table = _table(code)
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        run = self

        def local(frame, event, arg):
            if event == "opcode":
                run.opcodes += 1
                info = table.get(frame.f_lasti)
                if info is None:
                    if run.opcodes > run.max_opcodes:
                        run._fail_livelock(run.current)
                    if run.record and run.current.pending is not None:
                        run._flush_write(run.current)
                    return local
                run._visible(frame, info)
            elif run.record and run.current.pending is not None:
                run._flush_write(run.current)
            return local

        local.watched = True
        return local

    def _entered_library(self, caller, code) -> None:
        """Your code entered library code without a call instruction (an operator, a property, a
        descriptor, an iterator): as for a call, unless our own models or the scenario."""
        if code.co_filename in _TRUSTED_CODE or self.finished:
            return
        info = _table(caller.f_code).get(caller.f_lasti)
        if info is not None and info[0] in _CALL_OPS:
            return  # the call instruction was the point (or a harmless callee)
        label = ("call", code.co_qualname)
        real = self._racy_access(self.current, label, label, True)
        if self.record and label in self.racy:
            self._event_at(self.current, caller, step("entered", name=code.co_qualname))
        self.point(real=real)

    def _visible(self, frame, info) -> None:
        """An instruction of your code that touches data: maybe a scheduling point."""
        if self.finished:
            sys.settrace(None)
            _park()
        me = self.current
        if self.record and me.pending is not None:
            self._flush_write(me)
        op, name, base, key, text, verdict = info
        if op == "DRAIN":
            self._drain(me, frame, name, base, key, text)
            return
        if op in _OPERATOR_OPS:
            self._operator(me, frame, name, base, text)
            return
        if op in _CALL_OPS:
            self._call(me, frame, base, name, text, key)
            return
        write = op.startswith(("STORE", "DELETE"))
        mine = frame.f_code.co_filename in self.traced
        if not mine and op in _NAME_OPS:
            return  # a library's own globals and closures: its business, not your data
        # library code your code ran is told only where it races (its every read would drown the story)
        tell = self.record and mine
        if op in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF"):
            if verdict[0] is None or self.record:
                if op == "LOAD_GLOBAL":
                    v = frame.f_globals.get(name, _MISSING)
                    if v is _MISSING:
                        v = getattr(builtins, name, _MISSING)
                else:
                    v = frame.f_locals.get(name, _MISSING)
                if verdict[0] is None:
                    verdict[0] = self._boring(v) or (
                        isinstance(v, _IMMUTABLE) and name not in _rebound(frame.f_code.co_filename)
                    )
            if verdict[0]:
                return
            if tell:
                self._event_at(me, frame, step("read", what=name, value=_short(v)))
        elif op == "LOAD_ATTR":
            if verdict[0] is None or self.record:
                obj = _eval_chain(base, frame)
                v = _static_get(obj, name) if obj is not _MISSING else _MISSING
                if verdict[0] is None:
                    verdict[0] = v is not _MISSING and self._boring(v)
            if verdict[0]:
                return
            if verdict[1] is None:
                # reading a reference to a mutable container is how it gets mutated (append, pop,
                # ...): for the lockset rule, count it as a write
                verdict[1] = isinstance(v, _CONTAINERS)
            write = verdict[1]
            if tell:
                self._event_at(me, frame, _read(text, v))
        elif op == "BINARY_SUBSCR":
            if tell:
                v = self._subscr(base, key, frame)
                self._event_at(me, frame, _read(text, v))
        else:  # a write or a delete
            if tell:
                me.pending = (frame, frame.f_lineno, op, name, base, key, text)
        if op in _ATTR_OPS:
            label = ("attr", name)
            obj = _eval_chain(base, frame)
            where = (id(obj), name) if obj is not _MISSING else label
            dunder = name.startswith("__") and name.endswith("__")
            if write and mine and dunder and (obj is _MISSING or isinstance(obj, type)):  # on a class, or maybe
                self._refuse_dunder(me, frame, f"{text} = ...")
        elif op in _SUBSCR_OPS:
            label = ("item", text.split("[")[0])
            obj = _eval_chain(base, frame)
            where = (id(obj), "[]") if obj is not _MISSING else label
        else:
            label = where = ("var", name)
            obj = None
        if not mine:  # the library's code names its accesses (its `self.data` is not yours)
            label = (frame.f_code.co_qualname, *label)
        real = self._racy_access(me, where, label, write, obj)
        if self.record and not mine and label in self.racy:
            self._event_at(me, frame, step("wrote_it" if write else "read_it", what=text))
        self.point(real=real)

    def _racy_access(self, me: _Sim, where, label, write: bool, obj=None) -> bool:
        """Eraser's lockset rule: is ``label`` shared, written, and not always under one lock?

        Accesses to such locations are scheduling points; the others need none (a switch at the
        lock operations around them is just as good), which keeps the search small."""
        if self.all_points:
            return True
        # ``where`` is the location in this run (the object and attribute), ``label`` its name
        # across runs (the attribute): one racy instance makes every access by that name a point.
        st = self.loc_state.get(where)
        held = frozenset(me.held)
        if st is None:
            # exclusive to its first thread; holding ``obj`` keeps its id from being reused; for
            # its writes, the owner's clock at the last one and the locks held at every one
            self.loc_state[where] = [
                me.index,
                write,
                None,
                obj,
                me.vc[me.index] if write else None,
                held if write else None,
            ]
        elif st[0] == me.index:
            st[1] = st[1] or write
            if write:
                st[4], st[5] = me.vc[me.index], held if st[5] is None else st[5] & held
        else:
            if st[0] >= 0:  # a second thread: now shared
                if st[4] is not None and me.vc.get(st[0], -1) < st[4]:
                    # Eraser would call this a hand-over after initialisation, but the owner wrote
                    # while this thread ran (no start or join orders them): shared and written
                    st[0], st[1], st[2] = -1, True, st[5] & held
                else:
                    st[0], st[1], st[2] = -1, write, held
            else:
                st[1] = st[1] or write
                st[2] = st[2] & me.held
            if st[1] and not st[2] and label not in self.racy:
                self.racy.add(label)
                self.new_racy.add(label)
        return label in self.racy

    def _subscr(self, base, key, frame):
        c = _eval_chain(base, frame)
        k = _eval_chain(key, frame)
        if c is _MISSING or k is _MISSING or type(c) not in (list, dict, tuple, collections.deque):
            return _MISSING
        try:
            return c[k]
        except Exception:
            return _MISSING

    def _flush_write(self, me: _Sim) -> None:
        frame, line, op, name, base, key, text = me.pending
        me.pending = None
        if op.startswith("DELETE"):
            self._event_at(me, frame, step("deleted", what=text), line)
            return
        if op == "STORE_GLOBAL":
            v = frame.f_globals.get(name, _MISSING)
        elif op == "STORE_DEREF":
            v = frame.f_locals.get(name, _MISSING)
        elif op == "STORE_ATTR":
            obj = _eval_chain(base, frame)
            v = _static_get(obj, name) if obj is not _MISSING else _MISSING
        else:
            v = self._subscr(base, key, frame)
        if v is not _MISSING and self._boring(v) and not isinstance(v, _Sync):
            return  # rebinding a function or class: not worth a line
        written = step("wrote", what=text, value=_short(v)) if v is not _MISSING else step("wrote_it", what=text)
        self._event_at(me, frame, written, line)

    def _call(self, me: _Sim, frame, func_chain, arg_chains, text, spliced=None) -> None:
        """A call: Python code is watched inside; a harmless builtin reads the containers it is
        given; any other callee may change its receiver and the containers it is given, and
        whatever else it reaches (the call itself is an access, named by its text). ``f(*w)``
        iterates ``w`` in C first, whatever ``f`` is: a drain (see _drain)."""
        if spliced is not None and not all(_iterator_verdict(_eval_chain(c, frame))[0] for c in spliced):
            self._touch(me, frame, [(None, ("call", f"{text}(*...)"), True)], step("spliced", what=text))
        callee = _eval_chain(func_chain, frame)  # every time: the same text may name another callee
        if frame.f_code.co_filename in self.traced and self._makes_hidden_dunder(callee, arg_chains, frame):
            self._refuse_dunder(me, frame, f"{text}(...)")
        kind = self._callee(callee, arg_chains, frame) if callee is not _MISSING else None
        if kind == "python":
            return
        chains = list(arg_chains or ())
        if kind is None and func_chain is not None and len(func_chain) > 1:
            chains.append(func_chain[:-1])  # the receiver of a method
        accesses = []
        for c in chains:
            v = _eval_chain(c, frame)
            if v is not _MISSING and isinstance(v, _CONTAINERS):
                accesses.append((v, c, kind is None))
        if kind is None:
            accesses.append((None, ("call", text), True))
        self._touch(me, frame, accesses, step("called", what=text))

    @staticmethod
    def _makes_hidden_dunder(callee, arg_chains, frame) -> bool:
        """A call of your code that sets a dunder on a class (``setattr(Box, "__setitem__", f)``) or
        makes a class from a namespace (``type("Box", (), ns)``): what a class statement's dunders
        are checked for (_sched_models._build_class) could be set out of its sight."""
        if (isinstance(callee, type) and issubclass(callee, type)) or callee is type.__new__:
            return arg_chains is None or len(arg_chains) >= 3
        if any(callee is f for f in (setattr, delattr, type.__setattr__, type.__delattr__, object.__setattr__)):
            args = [_eval_chain(c, frame) for c in arg_chains or ()] + [_MISSING, _MISSING]
            dunder = type(args[1]) is str and args[1].startswith("__") and args[1].endswith("__")
            if isinstance(args[0], type):
                return dunder or args[1] is _MISSING
            return dunder and args[0] is _MISSING  # on what, out of sight: maybe a class
        return False

    def _refuse_dunder(self, me: _Sim, frame, what: str) -> None:
        self._end(
            Failure(
                "refused",
                M.both(
                    "refused_dunder",
                    name=me.name,
                    what=what,
                    line=located(_line_text(frame.f_code.co_filename, frame.f_lineno)),
                ),
                blocked=[(me.name, "refused", _line_text(frame.f_code.co_filename, frame.f_lineno))],
            )
        )

    def _drain(self, me: _Sim, frame, kind, operands, link, text) -> None:
        """Iterating, unpacking or splicing: an access to an unknown location (C code of the
        operand's choosing may run, a ``map(setattr, ...)``), unless no code runs at all.

        A loop is judged once, at its GET_ITER, by what it iterates; its every FOR_ITER then is
        a point or not by that verdict (kept per frame and loop: a name the body rebinds changes
        nothing)."""
        if kind == "iter":
            me.loops[(id(frame), frame.f_lasti)] = (*self._iterable_verdict(operands, frame), text)
            return  # GET_ITER itself calls ``__iter__``: C for every builtin, traced Python otherwise
        if kind == "next":
            harmless, _, what = self._loop(me, frame, link, text)
            if harmless:
                return
            label, told = f"next({what})", step("iterated", what=place(what))
        elif kind == "unpack":
            if link is not None:  # a loop's target: an element of what it iterates
                harmless = self._loop(me, frame, link, text)[1]
            elif operands == "literal":
                harmless = True
            else:
                v = _eval_chain(operands, frame)
                harmless = v is not _MISSING and type(v) in _PLAIN_TYPES
            if harmless:
                return
            label, told = text, _place(text) or step("ran", what=text)
        else:  # splice
            values = [_eval_chain(c, frame) for c in operands] if operands is not None else [_MISSING]
            if all(_iterator_verdict(v)[0] for v in values):
                return
            label, told = text, _place(text) or step("ran", what=text)
        self._touch(me, frame, [(None, ("call", label), True)], told)

    @staticmethod
    def _loop(me: _Sim, frame, link, text) -> tuple:
        """(harmless, its elements are tuples it makes, what it iterates) of the loop ``link``
        names: its GET_ITER's offset, or "dot0" for a comprehension's first loop (its iterator is
        the local ``.0``, made by the enclosing code)."""
        if link == "dot0":
            return (*_iterator_verdict(frame.f_locals.get(".0", _MISSING)), f".0 in {frame.f_code.co_qualname}")
        return me.loops.get((id(frame), link), (False, False, text))

    def _iterable_verdict(self, operands, frame) -> tuple[bool, bool]:
        """(no code runs when it is iterated, its elements are tuples it makes)."""
        if operands is None:
            return False, False
        if operands[0] == "value":
            return _iterator_verdict(_eval_chain(operands[1], frame))
        _, func_chain, arg_chains = operands
        f = _eval_chain(func_chain, frame)
        args = [_eval_chain(c, frame) for c in arg_chains]
        if any(a is _MISSING for a in args):
            return False, False
        if f is range or f is enumerate or f is zip or f is reversed:  # `is`: an object of yours may say == to anything
            return all(_iterator_verdict(a)[0] for a in args), f is enumerate or f is zip
        if any(f is g for g in (sorted, list, tuple, set, frozenset, dict)):  # eager (the call is its own point)
            return True, False
        # d.items(): a view of a dict, its elements pairs it makes (read statically: dict.items)
        if f is dict.items or f is dict.keys or f is dict.values:
            if func_chain is not None and len(func_chain) > 1 and type(_eval_chain(func_chain[:-1], frame)) is dict:
                return True, f is dict.items
        return False, False

    def _operator(self, me: _Sim, frame, inplace, chains, text) -> None:
        """An operator: a write of its operand when it changes a mutable one in place, or when an
        operand is no builtin value (its dunder may be anything, a C method included); a read of
        a builtin container it looks into (``x in items``, ``items == []``)."""
        accesses = []
        for i, c in enumerate(chains):
            v = _eval_chain(c, frame)
            if v is _MISSING:
                continue
            if inplace and i == 0:
                if not isinstance(v, _IMMUTABLE):  # an immutable target is rebound: its STORE is the access
                    accesses.append((v, c, True))
            elif type(v) not in _PLAIN_TYPES:
                accesses.append((v, c, True))
                # and its dunder may write anywhere: ``0 in map(setattr, ...)`` (a drain, see _drain)
                accesses.append((None, ("call", text), True))
            elif isinstance(v, _CONTAINERS):
                accesses.append((v, c, False))
        self._touch(me, frame, accesses, step("changed" if inplace else "ran", what=text))

    def _touch(self, me: _Sim, frame, accesses, told: tuple) -> None:
        """One potential scheduling point for these accesses: (object, its chain, write); an object
        of None is a call's own location, its chain ("call", text)."""
        if not accesses:
            return
        real = tell = False
        for obj, chain, write in accesses:
            if obj is None:
                label = where = chain
            else:
                label, where = ("item", _chain_text(chain)), (id(obj), "[]")
            real = self._racy_access(me, where, label, write, obj) or real
            tell = tell or label in self.racy  # racy, not merely replayed as a point
        if self.record and tell:
            self._event_at(me, frame, told)
        self.point(real=real)

    def _event_at(self, me, frame, action, line=None):
        if frame.f_code.co_filename not in self.traced:  # library code your code ran: told at your line
            inner = frame.f_code.co_qualname
            frame, line = self._student_frame(frame), None
            if frame is None:
                return
            action = step("in_library", step=action, inner=inner)
        line = line or frame.f_lineno
        self.events.append((me.name, line, linecache.getline(frame.f_code.co_filename, line).strip(), action))

    def _callee(self, f, arg_chains, frame) -> str | None:
        """ "python": Python code (yours and the library's are watched inside, our models and the
        trusted stdlib are points of their own), your classes and our models; "builtin": one of
        _HARMLESS_CALLS given builtin values only; None: anything else."""
        if id(f) in _HARMLESS_CALLS:
            if arg_chains is None:
                return None
            values = [_eval_chain(c, frame) for c in arg_chains]
            return "builtin" if all(v is not _MISSING and type(v) in _PLAIN_TYPES for v in values) else None
        if type(f) is types.MethodType:  # exactly: anything can claim a __func__
            f = f.__func__
        if type(f) is types.FunctionType:
            return "python"
        if isinstance(f, type) and (f.__module__ in _TRUSTED_MODULES or f.__module__ in self.student_modules):
            return "python"  # making an object of your class or one of our models
        return None

    def _boring(self, v) -> bool:
        """Values whose reads cannot race: code, modules, locks, your objects' references."""
        if isinstance(
            v,
            (
                types.ModuleType,
                type,
                types.FunctionType,
                types.BuiltinFunctionType,
                types.MethodType,
                _Sync,
                Thread,
                types.MethodWrapperType,
                staticmethod,
                classmethod,
            ),
        ):
            return True
        if v is _MISSING:
            return False
        return getattr(type(v), "__module__", None) in self.student_modules

    def story_events(self, limit: int = 40) -> list:
        """The rows of :meth:`story` as plain data (for the swimlane picture): see :func:`rows`."""
        return rows(self.events, limit)

    def story(self, limit: int = 40) -> str:
        """The interleaving so far, in your own lines, in the language in force (:func:`tell`)."""
        return tell(self.events, limit)


def _exc_where(e: BaseException, traced) -> str | Both:
    import traceback

    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename in traced]
    if not frames:
        return M.both("not_yours")
    f = frames[-1]
    return f"line {f.lineno}: {(f.line or '').strip()}"
