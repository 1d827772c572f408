"""A deterministic scheduler for threaded Python code: explore interleavings, replay the bad one.

On CPython a data race almost never shows up in a stress test (the interpreter switches threads
only at calls and loop back-edges, so an unlocked ``counter += 1`` loses nothing in practice).
This module runs a piece of threaded code under *our* control instead:

* ``threading`` (Thread, Lock, RLock, Condition, Semaphore, BoundedSemaphore, Event, ...),
  ``time`` (sleep, monotonic, time, perf_counter) and ``queue.SimpleQueue`` are replaced by models
  while a run is in progress. Every simulated thread is a real OS thread, but only one of them
  runs at a time: the scheduler hands the baton from one to the next.
* The scheduler may switch threads before every access the code under test makes to shared data
  (attribute, subscript, global and closure reads and writes: traced with ``sys.settrace`` and
  ``f_trace_opcodes``, which is deterministic on Python 3.11), before every call that may touch
  data out of sight (``setattr``, a C method, library code entered through an operator or a
  property), and at every synchronisation call.
* Time is virtual: it only moves when every thread is blocked, so ``sleep`` and timeouts are
  deterministic too.

:func:`explore` tries schedules best-first by the number of deviations from the default schedule
(go on with the running thread; when it blocks or ends, the next one in turn), i.e. delay
bounding, close to CHESS's preemption bounding: every schedule with at most ``max_preemptions``
deviations first, then ``random_schedules`` seeded random ones. Shared-data accesses are only
scheduling points where Eraser's lockset rule finds them racy (written by several threads without
one common lock), which keeps the search small. The first failure found is one with the fewest
deviations. It reports a lost update (the scenario's own check), an exception in any thread, a
deadlock (with the wait-for cycle and your source lines), threads left blocked when the program
ends (a lost wakeup), a livelock (a step budget), and tells the failing interleaving as a short
story in your own lines. The schedule is a string: pass it to :func:`replay` to run exactly that
interleaving again.

Everything is counted in schedules and steps, never in seconds: the same code gets the same
verdict on every run, on any machine, under any load.

This module is the public API and the search over schedules; the rest of the scheduler is in its
private parts, one file for each thing that changes on its own: ``_sched_code`` (which bytecodes of
your code are scheduling points, what they touch, and which files are the scheduler's own),
``_sched_models`` (threading, time and queue as the code under test sees them) and ``_sched_run``
(the simulated threads, the run, its failures and its story).
"""

from __future__ import annotations

import ast
import concurrent.futures.thread as _cf_thread
import heapq
import itertools
import os
import random
import sys
import threading
import time
import types

# The parts of the scheduler (docs/design.md): what it sees of your code, the models of
# threading/time/queue, and the run. This module is the search over schedules and the public API.
from ch13lib import _sched_code, _sched_models, _sched_run
from ch13lib._sched_code import _SCHED_FILES
from ch13lib._sched_models import (
    _REAL_MONOTONIC,
    _MainThread,
    _Patched,
    _real_lock,
    settle,
    threads_started,
)
from ch13lib._sched_run import Failure, Report, Run
from ch13lib.cell import cell_source, compile_cell, new_module, self_check_filename  # noqa: F401 - cell_source: public here too
from ch13lib.lang import Both, Messages

# What the search and the replay tell a student, in the course's language (ch13lib/lang.py); the
# scheduler's failures are in _sched_run's table.
M = Messages(
    hang=(
        "某个线程阻塞在模拟器之外 (阻塞在运行开始之前创建的某个对象上, 或一次 C 层面的等待上), 再也没有回来",
        "a thread blocked outside the simulator (on something created before the run started, or a C-level "
        "wait) and never came back",
    ),
    not_the_same=(
        "\n(注意: 重放这个调度并不是每次都以同样的方式失败: 代码依赖于交错之外的东西, 比如对象地址或真实时钟)",
        "\n(note: replaying this schedule did not fail the same way every time: the code depends on something "
        "besides the interleaving, such as object addresses or the real clock)",
    ),
    diverged=(
        "(这个调度已经和这段代码对不上了: 单元格改过了吗? 已尽可能地重放)",
        "(this schedule does not fit this code any more: did the cell change? replayed as far as it fits)",
    ),
    no_failure=(
        "这个调度一直运行到结束, 没有失败; 发生的经过:",
        "this schedule ran to the end without a failure; what happened:",
    ),
    not_plain=(
        "被测代码在需要普通值的地方交回了一个 {type} (一个 {base} 的子类, 或带有自定义比较的对象): 请返回普通的 "
        "int、str、list ... 值",
        "the code under test handed back a {type} (a {base} subclass or an object with its own comparisons) "
        "where a plain value was expected: return plain int, str, list ... values",
    ),
)


__all__ = [
    "explore",
    "scenario_main",
    "replay",
    "run_schedule",
    "settle",
    "Report",
    "Failure",
    "Source",
    "cell_source",
    "format_schedule",
    "parse_schedule",
]

# Frames and code in the scheduler's files are never yours: the one set of them must name every part
# of the scheduler as imported, or a part left out would add scheduling points.
_LOADED_PARTS = (sys.modules[__name__], _sched_code, _sched_models, _sched_run)
if {m.__file__ for m in _LOADED_PARTS} != _SCHED_FILES or {
    m.__name__ for m in _LOADED_PARTS
} != _sched_code._SCHED_MODULES:
    raise ImportError(f"ch13lib.sched: its parts are not the files {sorted(_SCHED_FILES)}")

_explore_lock = _real_lock()  # explore/replay calls do not nest or overlap


# --------------------------------------------------------------------------------------------
# Loading the code under test
# --------------------------------------------------------------------------------------------


class Source:
    """Source code loaded as a fresh module for every schedule, traced as 'your code'."""

    _count = itertools.count(1)

    def __init__(self, source: str, filename: str = self_check_filename()) -> None:
        self.source = source
        self.filename = filename
        self._code = compile_cell(source, filename)  # ch13lib/cell.py: a pseudo file name only

    def load(self) -> types.ModuleType:
        return new_module(self._code, f"ch13_sched_{next(self._count)}")


# --------------------------------------------------------------------------------------------
# Running schedules
# --------------------------------------------------------------------------------------------


def format_schedule(steps) -> str:
    """Which thread took each step (0 = main, 1 = T1, ...), run-length encoded: '0x12 1x3 0x2'."""
    out = []
    for k, grp in itertools.groupby(steps):
        out.append(f"{k}x{len(list(grp))}")
    return " ".join(out)


def parse_schedule(text: str) -> list[int]:
    steps = []
    for part in text.split():
        k, _, n = part.partition("x")
        steps += [int(k)] * int(n or 1)
    return steps


def _preemptions(decisions) -> int:
    return sum(1 for _, cur, chosen, _d in decisions if cur is not None and chosen != cur)


def run_schedule(
    main,
    prefix=(),
    *,
    traced=(),
    rng=None,
    record=False,
    max_steps=20000,
    max_opcodes=500_000,
    watchdog_s=30.0,
    early_timeouts=False,
    racy=(),
    follow=None,
) -> Run:
    """Run ``main(run)`` once as the main simulated thread, following ``prefix`` (patches must be on)."""
    run = Run(
        prefix,
        rng=rng,
        record=record,
        traced=traced,
        max_steps=max_steps,
        max_opcodes=max_opcodes,
        early_timeouts=early_timeouts,
        racy=racy,
        follow=follow,
    )
    random.seed(0)
    sim = run.new_sim(_MainThread(), "main")
    run.current = sim
    _sched_models._active = run

    def body():
        run.result = main(run)

    run.launch(sim, body)
    sim.go.release()
    if not run.done.acquire(timeout=watchdog_s):  # the hang guard, never a verdict on a normal run
        run.finished = True
        run.failure = Failure("hang", M.both("hang"))
    _sched_models._active = None
    for t in [t.thread for t in run.threads]:
        _cf_thread._threads_queues.pop(t, None)
    return run


def explore(
    main,
    *,
    traced,
    check=None,
    max_preemptions=2,
    max_schedules=5000,
    random_schedules=0,
    seed=0,
    max_steps=20000,
    max_opcodes=500_000,
    replays=2,
    early_timeouts=False,
    bound: str = "delay",
) -> Report:
    """Search schedules of ``main`` for a failure, fewest preemptions first.

    ``main(run)`` runs as the main thread of every schedule: it should load the code under test
    afresh, start threads and return a result; ``check(result)`` returns a message (a failure) or
    None. ``traced`` is the set of filenames whose code gets scheduling points. With
    ``early_timeouts`` a timed wait (sleep, acquire(timeout=...)) may also end while other threads
    could still run (time passing is one more choice); without, time moves only when every thread
    waits.

    Scheduling points: every lock/semaphore/condition/join/sleep call, and every access to a
    shared location that the lockset rule (Eraser) finds written by several threads without one
    common lock. When a run discovers such a location, the search starts again with it as a
    point, so the search is complete for the final set of points.

    ``bound="delay"`` (the default) counts every deviation from the default schedule;
    ``bound="preemption"`` counts only switches away from a thread that could have gone on (CHESS's
    preemption bounding: free choices at blocking points are all explored, which grows fast with
    the number of threads; the bench uses it to measure coverage).
    """
    opts = dict(max_steps=max_steps, max_opcodes=max_opcodes, early_timeouts=early_timeouts)
    t0 = _REAL_MONOTONIC()
    racy: set = set()
    with _explore_lock, _Patched():
        seq = itertools.count()
        heap = [(0, next(seq), ())]
        n = 0
        exhaustive = True
        found = None
        branching = False
        most = 0
        while heap:
            if n >= max_schedules:
                exhaustive = False
                break
            cost, _, prefix = heapq.heappop(heap)
            run = _one(main, prefix, traced, check, None, racy=frozenset(racy), **opts)
            n += 1
            most = max(most, len(run.threads) - 1)
            if run.failure is not None:
                found = run
                break
            if run.new_racy:  # more points than we thought: start the search again
                racy |= run.new_racy
                heap = [(0, next(seq), ())]
                branching = False
                continue
            branching = branching or bool(run.decisions)
            # delay bounding: every choice other than the default (go on with the running
            # thread; after a block or an end, the next thread in turn) costs one
            base = tuple(d[2] for d in run.decisions)
            for i in range(len(prefix), len(run.decisions)):
                enabled, cur, chosen, default = run.decisions[i]
                step = 1 if bound == "delay" or cur is not None else 0
                if cost + step > max_preemptions:
                    continue
                for alt in enabled:
                    if alt != chosen:
                        heapq.heappush(heap, (cost + step, next(seq), base[:i] + (alt,)))
        r = 0
        if found is None and not branching:
            random_schedules = 0  # a single possible interleaving: nothing random to try
        if found is None:
            while r < random_schedules:
                rng = random.Random(seed * 1_000_003 + r)
                run = _one(main, (), traced, check, rng, racy=frozenset(racy), **opts)
                n += 1
                r += 1
                if run.failure is not None:
                    found = run
                    break
                racy |= run.new_racy
        failure = None
        if found is not None:
            failure = _explain(main, found, traced, check, opts, replays)
    return Report(n, failure, exhaustive and found is None, max_preemptions, r, _REAL_MONOTONIC() - t0, most)


def _one(main, prefix, traced, check, rng, record=False, **opts) -> Run:
    run = run_schedule(main, prefix, traced=traced, rng=rng, record=record, **opts)
    if run.failure is None and check is not None:
        msg = check(run.result)
        if msg:
            run.failure = Failure("check", msg)
    if run.failure is not None and run.failure.kind == "exception":
        e = run.failure.exc
        if isinstance(e, AssertionError) and _raised_in_harness(e, traced):
            run.failure.kind = "check"
            said = e.args[0] if len(e.args) == 1 and isinstance(e.args[0], Both) else str(e)
            run.failure.say(said or _sched_run.M.both("check_failed"))
        else:
            name, _, where = run.failure.blocked[0]
            run.failure.say(
                _sched_run.M.both("raised_at", name=name, exc=type(e).__name__, text=e, where=_sched_run.located(where))
            )
    return run


def _raised_in_harness(e, traced) -> bool:
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and frames[-1].filename not in traced


def _explain(main, found: Run, traced, check, opts, replays) -> Failure:
    """Turn the failing run into a step trace anyone can replay, and tell its story.

    The failing choices are re-run with the recorder on, which notes which thread took every
    step; that trace is then replayed with a scheduling point at every step (what
    :func:`replay` does), which gives the story, and replayed again to check it fails the same
    way every time."""
    prefix = [d[2] for d in found.decisions]
    rec = _one(main, prefix, traced, check, None, record=True, racy=frozenset(found.racy - found.new_racy), **opts)
    steps = rec.trace
    # with the racy locations known, the story tells the calls and the library code that raced
    story_run = _one(main, (), traced, check, None, record=True, follow=steps, racy=frozenset(found.racy), **opts)
    failure = story_run.failure or rec.failure or found.failure
    failure.schedule = format_schedule(story_run.trace if story_run.failure else steps)
    failure.preemptions = _preemptions(found.decisions)
    failure.steps = list((story_run if story_run.failure else rec).events)
    same = story_run.failure is not None and story_run.failure.kind == found.failure.kind
    for _ in range(replays):
        again = _one(main, (), traced, check, None, follow=steps, **opts)
        same = same and again.failure is not None and again.failure.kind == found.failure.kind
    if not same:
        failure.say(_sched_run.joined([failure.said(), M.both("not_the_same")]))
    return failure


_PLAIN = (int, float, str, bytes, bool, type(None))
_COMPARE = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__")


def plain_value(x, depth: int = 0):
    """``x`` when a comparison with it tells the truth: an exact built-in value (or a list, tuple or
    set of them), or an object that keeps the default comparisons (identity). An ``int`` subclass
    whose ``__eq__`` always says True must not decide a scenario's assert: AssertionError."""
    t = type(x)
    if t in _PLAIN:
        return x
    if t in (list, tuple, set, frozenset) and depth < 4:
        for item in x:
            plain_value(item, depth + 1)
        return x
    if t is dict and depth < 4:
        for k, v in x.items():
            plain_value(k, depth + 1), plain_value(v, depth + 1)
        return x
    if all(_harness_made(vars(k)[name]) for k in t.__mro__[:-1] for name in _COMPARE if name in vars(k)):
        return x  # compares by identity, or as the harness's own classes (Res) do: nothing to lie with
    raise AssertionError(M.both("not_plain", type=t.__name__, base=t.__mro__[1].__name__))


def _harness_made(f) -> bool:
    """A comparison method written in this package's files (not one the code under test wrote)."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    return f is None or (type(f) is types.FunctionType and f.__code__.co_filename.startswith(here))


class _PlainCompares(ast.NodeTransformer):
    """Every comparison in a scenario compares plain values (see :func:`plain_value`)."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return node
        wrap = lambda e: ast.Call(ast.Name("__plain__", ast.Load()), [e], [])
        return ast.copy_location(ast.Compare(wrap(node.left), node.ops, [wrap(c) for c in node.comparators]), node)


def scenario_main(load, code: str, extra: dict | None = None):
    """A ``main`` for explore(): load the code under test afresh, then run the scenario ``code``.

    The scenario sees the fresh module as ``m`` (plus ``threading``, ``time`` and ``settle``);
    whatever it stores in ``result`` is handed to the check. Its comparisons see plain values only.
    """
    tree = ast.fix_missing_locations(_PlainCompares().visit(ast.parse(code)))
    compiled = compile(tree, "<scenario>", "exec")

    def main(run):
        m = load()
        sys.modules.pop(m.__name__, None)  # one module per schedule: do not keep them all
        run.student_modules.add(m.__name__)
        ns = {
            "m": m,
            "threading": threading,
            "time": time,
            "settle": settle,
            "threads_started": threads_started,
            "__plain__": plain_value,
            "__name__": "__scenario__",
            **(extra or {}),
        }
        exec(compiled, ns)
        return ns.get("result")

    return main


def replay(
    main, schedule: str, *, traced, check=None, max_steps=20000, early_timeouts=False, quiet=False
) -> Failure | None:
    """Run exactly one schedule (a string from a failure report) and tell its story."""
    with _explore_lock, _Patched():
        run = _one(
            main,
            (),
            traced,
            check,
            None,
            record=True,
            max_steps=max_steps,
            early_timeouts=early_timeouts,
            follow=parse_schedule(schedule),
        )
    if run.diverged and not quiet:
        print(M("diverged"))
    if run.failure is not None:
        run.failure.schedule = schedule
        run.failure.preemptions = run.preemptions
        run.failure.steps = list(run.events)
        return run.failure
    if not quiet:
        print(M("no_failure") + "\n" + run.story())
    return None
