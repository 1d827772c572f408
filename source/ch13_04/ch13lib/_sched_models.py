"""The models of ``threading``, ``time`` and ``queue`` (a part of :mod:`ch13lib.sched`).

Lock, RLock, Condition, Semaphore, BoundedSemaphore, Event, Thread, Timer, sleep, the clocks and
queue.SimpleQueue, as the code under test sees them while a run is in progress (``_Patched`` puts
them in place of the real ones and back). Each call of a model asks the run in progress
(``_active``, set by :func:`ch13lib.sched.run_schedule`) for a scheduling point or a wait; with no
run in progress (or from an OS thread that is not the run's current one) a model acts alone.
"""

from __future__ import annotations

import _thread
import builtins
import collections
import concurrent.futures.thread as _cf_thread
import io
import linecache
import queue as _queue_mod
import random
import sys
import threading
import time
from typing import TYPE_CHECKING

from ch13lib._sched_code import _SCHED_FILES, _hidden_dunders, _line_text
from ch13lib.lang import Both, Messages

if TYPE_CHECKING:
    from ch13lib._sched_run import Run, _Sim

# What a simulated thread waits for (told when it waits for ever), and the models' own refusals, in the
# course's language (ch13lib/lang.py). The errors that mimic threading's own keep Python's words.
M = Messages(
    settling=("其他线程阻塞或结束", "the other threads to block or finish"),
    held_by=("{lock} (被 {holder} 持有)", "{lock} (held by {holder})"),
    notify=("{cond} 上的一次 notify", "a notify on {cond}"),
    semaphore=("{sem} (值为 0)", "{sem} (value 0)"),
    event_set=("{event} 被 set", "{event} to be set"),
    join=("{thread} 结束 (join)", "{thread} to finish (join)"),
    sleep=("sleep({seconds}) 结束", "sleep({seconds}) to end"),
    blocks_outside=(
        "{what} 会在调度器之外永远阻塞下去",
        "{what} would block for ever outside the scheduler",
    ),
    start_outside=(
        "这个模拟线程只能在一次受调度的运行中启动",
        "this simulated thread can only start inside a scheduled run",
    ),
    hidden_dunder=(
        "class {name} 把 {names} 设成了不是 Python 函数的东西 ({type}): 解释器从 C 中调用它, 调度器看不到, "
        "所以它做了什么永远无法检查。请用 def 来写 dunder 方法。",
        "class {name} sets {names} to something that is not a Python function ({type}): the interpreter "
        "calls it from C, out of the scheduler's sight, so what it does could never be checked. Write "
        "dunder methods with def.",
    ),
)

# The real things, saved before anyone patches anything.
_real_lock = _thread.allocate_lock
_real_start = _thread.start_new_thread
_real_get_ident = _thread.get_ident
_REAL_MONOTONIC = time.monotonic
_EPOCH = 1_767_225_600.0  # what time.time() says at virtual time 0 (2026-01-01 00:00 UTC)

# --------------------------------------------------------------------------------------------
# The run in progress
# --------------------------------------------------------------------------------------------

_active: "Run | None" = None  # the run in progress (one at a time per process): run_schedule sets it


def _run_now() -> Run | None:
    run = _active
    if run is None or run.finished or run.current is None:
        return None
    if run.current.os_ident != _real_get_ident():
        return None
    return run


def threads_started() -> int:
    """(Harness helper) how many threads were started so far in this run (besides main)."""
    run = _active
    return run.spawned if run is not None else 0


def settle() -> None:
    """(Harness helper) wait until no other thread can take another step, then go on."""
    run = _run_now()
    if run is None:
        return
    me = run.current
    me.settling = True
    try:
        run.block(
            lambda: not any(t is not me and t.enabled() for t in run.threads),
            None,
            (M.both("settling"), None),
        )
    finally:
        me.settling = False


# --------------------------------------------------------------------------------------------
# The models of threading's primitives
# --------------------------------------------------------------------------------------------


class _Sync:
    _kind = "Sync"

    def __init__(self) -> None:
        run = _active
        if run is not None and not run.finished:
            run.sync_count[self._kind] += 1
            self._n = run.sync_count[self._kind]
        else:
            self._n = 0
        self._name = None

    def _label(self) -> str:
        return self._name or f"{self._kind}-{self._n}"

    def _log(self, run, verb: str, **fields):
        """Story event (a verb of _sched_run.STEPS and its fields, told in words when the story is
        printed), only when your code made the call (not the stdlib on your behalf)."""
        if run.record:
            f = sys._getframe(1)
            while f is not None and f.f_code.co_filename in _SCHED_FILES:
                f = f.f_back
            if f is not None and f.f_code.co_filename in run.traced:
                run.events.append(
                    (
                        run.current.name,
                        f.f_lineno,
                        linecache.getline(f.f_code.co_filename, f.f_lineno).strip(),
                        (verb, fields),
                    )
                )


def _deadline(run, timeout):
    if timeout is None or timeout < 0:
        return None
    return run.clock + timeout


def _caller_where(run) -> str:
    f = run._student_frame(sys._getframe(2))
    return _line_text(f.f_code.co_filename, f.f_lineno) if f is not None else ""


class Lock(_Sync):
    _kind = "Lock"

    def __init__(self) -> None:
        super().__init__()
        self._locked = False
        self._holder = None
        self._where = ""

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not blocking and timeout != -1:
            raise ValueError("can't specify a timeout for a non-blocking call")
        if timeout is not None and timeout < 0 and timeout != -1:
            raise ValueError("timeout value must be a non-negative number")
        run = _run_now()
        if run is None:
            if not self._locked:
                self._locked = True
                return True
            if not blocking or (timeout is not None and timeout >= 0):
                return False
            raise RuntimeError(M("blocks_outside", what=self._label()))
        if not blocking or timeout == 0:
            run.point()
            if self._locked:
                return False
        elif not run.block(
            lambda: not self._locked,
            _deadline(run, timeout),
            (M.both("held_by", lock=self._label(), holder=self._holder.name if self._holder else "?"), self),
            point=True,
        ):
            return False
        self._locked = True
        self._holder = run.current
        run.current.held.add(self)
        self._where = _caller_where(run)
        self._log(run, "acquired", lock=self._label())
        return True

    def release(self) -> None:
        run = _run_now()
        if not self._locked:
            raise RuntimeError("release unlocked lock")
        if run is not None:
            self._log(run, "released", lock=self._label())
        if self._holder is not None:
            self._holder.held.discard(self)
        self._locked = False
        self._holder = None

    def locked(self) -> bool:
        return self._locked

    def _is_owned(self) -> bool:
        return self._locked

    def _release_save(self):
        if self._holder is not None:
            self._holder.held.discard(self)
        self._locked = False
        self._holder = None

    def _acquire_restore(self, state) -> None:
        self.acquire()

    __enter__ = acquire

    def __exit__(self, *exc) -> None:
        self.release()

    acquire_lock = acquire
    release_lock = release
    locked_lock = locked

    def __repr__(self) -> str:
        return f"<simulated {'locked' if self._locked else 'unlocked'} {self._label()}>"


class RLock(Lock):
    _kind = "RLock"

    def __init__(self) -> None:
        super().__init__()
        self._count = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        run = _run_now()
        me = run.current if run is not None else None
        if self._count and self._holder is me:
            self._count += 1
            return True
        ok = Lock.acquire(self, blocking, timeout)
        if ok:
            self._count = 1
            self._holder = me
        return ok

    __enter__ = acquire

    def release(self) -> None:
        run = _run_now()
        me = run.current if run is not None else None
        if not self._count or self._holder is not me:
            raise RuntimeError("cannot release un-acquired lock")
        if self._count > 1:
            self._count -= 1
            return
        self._count = 0
        Lock.release(self)

    def _is_owned(self) -> bool:
        run = _run_now()
        return bool(self._count) and self._holder is (run.current if run else None)

    def _release_save(self):
        state = self._count
        if self._holder is not None:
            self._holder.held.discard(self)
        self._count = 0
        self._locked = False
        self._holder = None
        return state

    def _acquire_restore(self, state) -> None:
        Lock.acquire(self)
        run = _run_now()
        self._holder = run.current if run else None
        self._count = state


class Condition(_Sync):
    _kind = "Condition"

    def __init__(self, lock=None) -> None:
        super().__init__()
        self._lock = RLock() if lock is None else lock
        self._waiters: collections.deque = collections.deque()

    def acquire(self, *args, **kwargs):
        return self._lock.acquire(*args, **kwargs)

    def release(self):
        return self._lock.release()

    def __enter__(self):
        return self._lock.acquire()

    def __exit__(self, *exc):
        self._lock.release()

    def _owned(self) -> bool:
        return self._lock._is_owned()

    def wait(self, timeout: float | None = None) -> bool:
        if not self._owned():
            raise RuntimeError("cannot wait on un-acquired lock")
        run = _run_now()
        if run is None:
            raise RuntimeError(M("blocks_outside", what=f"{self._label()}.wait()"))
        waiter = [False]
        self._waiters.append(waiter)
        saved = self._lock._release_save()
        self._log(run, "waits", cond=self._label(), lock=self._lock._label())
        ok = run.block(lambda: waiter[0], _deadline(run, timeout), (M.both("notify", cond=self._label()), self))
        if not ok:
            try:
                self._waiters.remove(waiter)
            except ValueError:
                pass
        self._lock._acquire_restore(saved)
        self._log(run, "woke", cond=self._label(), lock=self._lock._label())
        return ok

    def wait_for(self, predicate, timeout: float | None = None):
        endtime = None
        waittime = timeout
        result = predicate()
        while not result:
            if waittime is not None:
                if endtime is None:
                    endtime = time.monotonic() + waittime
                else:
                    waittime = endtime - time.monotonic()
                    if waittime <= 0:
                        break
            self.wait(waittime)
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        if not self._owned():
            raise RuntimeError("cannot notify on un-acquired lock")
        run = _run_now()
        if run is not None:
            woke = 0
            while self._waiters and woke < n:
                self._waiters.popleft()[0] = True
                woke += 1
            self._log(run, "notified", n=woke, s=Both("", "s" if woke != 1 else ""), cond=self._label())

    def notify_all(self) -> None:
        self.notify(len(self._waiters) or 1)

    notifyAll = notify_all


class Semaphore(_Sync):
    _kind = "Semaphore"

    def __init__(self, value: int = 1) -> None:
        if value < 0:
            raise ValueError("semaphore initial value must be >= 0")
        super().__init__()
        self._value = value
        self._mutex = value == 1  # a binary semaphore used as a lock counts as one

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if not blocking and timeout is not None:
            raise ValueError("can't specify timeout for non-blocking acquire")
        run = _run_now()
        if run is None:
            if self._value > 0:
                self._value -= 1
                return True
            if not blocking or timeout is not None:
                return False
            raise RuntimeError(M("blocks_outside", what=self._label()))
        if not blocking or (timeout is not None and timeout <= 0):
            run.point()
            if self._value == 0:
                return False
        elif not run.block(
            lambda: self._value > 0, _deadline(run, timeout), (M.both("semaphore", sem=self._label()), self), point=True
        ):
            return False
        self._value -= 1
        if self._mutex:
            run.current.held.add(self)
        self._log(run, "acquired_sem", sem=self._label(), value=self._value)
        return True

    __enter__ = acquire

    def release(self, n: int = 1) -> None:
        if n < 1:
            raise ValueError("n must be one or more")
        run = _run_now()
        self._value += n
        if self._mutex and run is not None:
            run.current.held.discard(self)
        if self._value > 1:  # released more than acquired: it lets two threads in, no lock any more
            self._mutex = False
        if run is not None:
            self._log(run, "released_sem", sem=self._label(), value=self._value)

    def __exit__(self, *exc) -> None:
        self.release()


class BoundedSemaphore(Semaphore):
    _kind = "BoundedSemaphore"

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        self._initial_value = value

    def release(self, n: int = 1) -> None:
        if self._value + n > self._initial_value:
            raise ValueError("Semaphore released too many times")
        super().release(n)


class Event(_Sync):
    _kind = "Event"

    def __init__(self) -> None:
        super().__init__()
        self._flag = False

    def is_set(self) -> bool:
        return self._flag

    isSet = is_set

    def set(self) -> None:
        self._flag = True

    def clear(self) -> None:
        self._flag = False

    def wait(self, timeout: float | None = None) -> bool:
        run = _run_now()
        if run is None:
            return self._flag
        return run.block(
            lambda: self._flag, _deadline(run, timeout), (M.both("event_set", event=self._label()), self), point=True
        )


MODEL_TYPES = frozenset((Lock, RLock, Condition, Semaphore, BoundedSemaphore, Event))  # _sched_code._intact


class Thread:
    """threading.Thread, run under the scheduler."""

    def __init__(self, group=None, target=None, name=None, args=(), kwargs=None, *, daemon=None):
        self._target = target
        self._args = args
        self._kwargs = kwargs or {}
        self._name = name
        self._daemonic = bool(daemon)
        self._sim: _Sim | None = None
        self._run_of: Run | None = None
        self._ident = None
        run = _run_now()
        # A hash by order of creation in the run, not by address: the stdlib keeps threads in sets
        # (ThreadPoolExecutor joins them in set order), and an address differs from run to run.
        self._hash = 0
        if run is not None:
            run.made_threads += 1
            self._hash = run.made_threads

    def __hash__(self) -> int:
        return self._hash

    def start(self) -> None:
        run = _run_now()
        if self._sim is not None:
            raise RuntimeError("threads can only be started once")
        if run is None:
            raise RuntimeError(M("start_outside"))
        sim = run.new_sim(self)
        parent = run.current  # what it did so far happens before the child; what it does next, not
        sim.vc = {**parent.vc, sim.index: 0}
        parent.vc[parent.index] += 1
        self._sim = sim
        self._run_of = run
        self._ident = 1000 + sim.index
        if self._name is None:
            self._name = sim.name
        run.spawned += 1
        if run.record:
            run._event(run.current, ("started", {"thread": sim.name}), depth=1)
        run.launch(sim, self.run)

    def run(self) -> None:
        try:
            if self._target is not None:
                self._target(*self._args, **self._kwargs)
        finally:
            del self._target, self._args, self._kwargs

    def join(self, timeout: float | None = None) -> None:
        if self._sim is None:
            raise RuntimeError("cannot join thread before it is started")
        run = _run_now()
        if run is None or self._run_of is not run:
            return
        if self._sim is run.current:
            raise RuntimeError("cannot join current thread")
        sim = self._sim
        if run.block(lambda: sim.done, _deadline(run, timeout), (M.both("join", thread=sim.name), self), point=True):
            me = run.current  # everything the joined thread did happens before what we do next
            for k, v in sim.vc.items():
                if me.vc.get(k, -1) < v:
                    me.vc[k] = v
            if run.record:
                run._event(run.current, ("joined", {"thread": sim.name}), depth=1)

    def is_alive(self) -> bool:
        return self._sim is not None and self._sim.started and not self._sim.done

    @property
    def name(self) -> str:
        return self._name or "Thread"

    @name.setter
    def name(self, v) -> None:
        self._name = str(v)

    @property
    def ident(self):
        return self._ident

    native_id = ident

    @property
    def daemon(self) -> bool:
        return self._daemonic

    @daemon.setter
    def daemon(self, v) -> None:
        self._daemonic = bool(v)

    def isDaemon(self):
        return self._daemonic

    def setDaemon(self, v):
        self._daemonic = bool(v)

    def getName(self):
        return self.name

    def setName(self, v):
        self.name = v

    def __repr__(self) -> str:
        return f"<simulated Thread {self.name}>"


class Timer(Thread):
    """threading.Timer on the models: waits ``interval`` virtual seconds unless cancelled."""

    def __init__(self, interval, function, args=None, kwargs=None):
        super().__init__()
        self.interval = interval
        self.function = function
        self.args = args if args is not None else []
        self.kwargs = kwargs if kwargs is not None else {}
        self.finished = Event()

    def cancel(self) -> None:
        self.finished.set()

    def run(self) -> None:
        self.finished.wait(self.interval)
        if not self.finished.is_set():
            self.function(*self.args, **self.kwargs)
        self.finished.set()


class _MainThread(Thread):
    def __init__(self) -> None:
        super().__init__(name="MainThread")


def _current_thread():
    run = _run_now()
    if run is None:
        return _REAL["threading.current_thread"]()
    return run.current.thread


def _main_thread():
    run = _active
    if run is None or not run.threads:
        return _REAL["threading.main_thread"]()
    return run.threads[0].thread


def _enumerate():
    run = _run_now()
    if run is None:
        return _REAL["threading.enumerate"]()
    return [t.thread for t in run.threads if t.started and not t.done]


def _active_count():
    return len(_enumerate())


def _sleep(seconds) -> None:
    run = _run_now()
    if run is None:
        return _REAL["time.sleep"](seconds)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    run.point()
    if seconds > 0:
        if run.record:
            run._event(run.current, ("sleeps", {"seconds": f"{seconds:g}"}), depth=2)
        run.block(lambda: False, run.clock + seconds, (M.both("sleep", seconds=f"{seconds:g}"), None))


def _monotonic() -> float:
    run = _run_now()
    return run.clock if run is not None else _REAL["time.monotonic"]()


def _wall() -> float:
    run = _run_now()
    return _EPOCH + run.clock if run is not None else _REAL["time.time"]()


def _ns(f):
    return lambda: int(f() * 1e9)


class SimpleQueue:
    """queue.SimpleQueue in pure Python on the models (the C one would block invisibly)."""

    def __init__(self) -> None:
        self._items = collections.deque()
        self._cond = Condition(Lock())

    def put(self, item, block=True, timeout=None) -> None:
        if _run_now() is None:
            self._items.append(item)
            return
        with self._cond:
            self._items.append(item)
            self._cond.notify()

    put_nowait = put

    def get(self, block=True, timeout=None):
        if _run_now() is None:
            if self._items:
                return self._items.popleft()
            raise _queue_mod.Empty
        with self._cond:
            if not block:
                if not self._items:
                    raise _queue_mod.Empty
            elif timeout is None:
                while not self._items:
                    self._cond.wait()
            else:
                end = _monotonic() + timeout
                while not self._items:
                    left = end - _monotonic()
                    if left <= 0:
                        raise _queue_mod.Empty
                    self._cond.wait(left)
            return self._items.popleft()

    def get_nowait(self):
        return self.get(False)

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)


_REAL_BUILD_CLASS = builtins.__build_class__


def _build_class(func, name, *bases, **kwds):
    """A class statement, as the interpreter runs it; one of your code's may not hide a dunder method
    written in C (see _sched_code._hidden_dunders): TypeError, at its line."""
    cls = _REAL_BUILD_CLASS(func, name, *bases, **kwds)
    run = _active
    if run is not None and getattr(func, "__code__", None) is not None and func.__code__.co_filename in run.traced:
        bad = _hidden_dunders(vars(cls))
        if bad:
            raise TypeError(M("hidden_dunder", name=name, names=", ".join(bad), type=type(vars(cls)[bad[0]]).__name__))
    return cls


_REAL = {
    "builtins.__build_class__": _REAL_BUILD_CLASS,
    "threading.Lock": threading.Lock,
    "threading.RLock": threading.RLock,
    "threading.Condition": threading.Condition,
    "threading.Semaphore": threading.Semaphore,
    "threading.BoundedSemaphore": threading.BoundedSemaphore,
    "threading.Event": threading.Event,
    "threading.Thread": threading.Thread,
    "threading.Timer": threading.Timer,
    "threading.current_thread": threading.current_thread,
    "threading.currentThread": threading.currentThread,
    "threading.main_thread": threading.main_thread,
    "threading.enumerate": threading.enumerate,
    "threading.active_count": threading.active_count,
    "threading._time": threading._time,
    "time.sleep": time.sleep,
    "time.monotonic": time.monotonic,
    "time.time": time.time,
    "time.perf_counter": time.perf_counter,
    "time.monotonic_ns": time.monotonic_ns,
    "time.time_ns": time.time_ns,
    "time.perf_counter_ns": time.perf_counter_ns,
    "queue.time": _queue_mod.time,
    "queue.SimpleQueue": _queue_mod.SimpleQueue,
    "cf._global_shutdown_lock": _cf_thread._global_shutdown_lock,
}
_MODULES = {"threading": threading, "time": time, "queue": _queue_mod, "cf": _cf_thread, "builtins": builtins}
_PATCH = {
    "builtins.__build_class__": _build_class,
    "threading.Lock": Lock,
    "threading.RLock": RLock,
    "threading.Condition": Condition,
    "threading.Semaphore": Semaphore,
    "threading.BoundedSemaphore": BoundedSemaphore,
    "threading.Event": Event,
    "threading.Thread": Thread,
    "threading.Timer": Timer,
    "threading.current_thread": _current_thread,
    "threading.currentThread": _current_thread,
    "threading.main_thread": _main_thread,
    "threading.enumerate": _enumerate,
    "threading.active_count": _active_count,
    "threading._time": _monotonic,
    "time.sleep": _sleep,
    "time.monotonic": _monotonic,
    "time.time": _wall,
    "time.perf_counter": _monotonic,
    "time.monotonic_ns": _ns(_monotonic),
    "time.time_ns": _ns(_wall),
    "time.perf_counter_ns": _ns(_monotonic),
    "queue.time": _monotonic,
    "queue.SimpleQueue": SimpleQueue,
}


class _Patched:
    """threading/time/queue replaced by the models for the duration of a ``with`` block."""

    def __enter__(self):
        import gc

        self._gc = gc.isenabled()
        gc.disable()  # no collector callbacks at arbitrary points of a run
        self._random = random.getstate()
        self._stdout, self._stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()  # prints of the code under test go nowhere
        for key, value in _PATCH.items():
            mod, attr = key.split(".", 1)
            setattr(_MODULES[mod], attr, value)
        _cf_thread._global_shutdown_lock = Lock()
        # simulated threads get 1 MiB stacks, not the default 8: threads of failed runs stay
        # parked, and the sandbox counts their stacks against its memory limit
        self._stack = _thread.stack_size(1 << 20)
        return self

    def __exit__(self, *exc):
        import gc

        for key, value in _REAL.items():
            mod, attr = key.split(".", 1)
            # Only where the model is still in place: if the code under test replaced it meanwhile
            # (``threading.Thread = Serial``), its object stays for the grading subject's tamper
            # report to see, instead of being quietly undone here.
            if key not in _PATCH or getattr(_MODULES[mod], attr, None) is _PATCH[key]:
                setattr(_MODULES[mod], attr, value)
        sys.stdout, sys.stderr = self._stdout, self._stderr
        _thread.stack_size(self._stack)
        random.setstate(self._random)
        if self._gc:
            gc.enable()
        return False
