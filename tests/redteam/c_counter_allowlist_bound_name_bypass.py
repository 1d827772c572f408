# redteam: a counter that binds the name getattr in an unused function so the allow-list skipped every use of the built-in, then reaches the scheduler's held set through a computed __globals__
# kind: cell
# target: counter
# score: counter=0
# message: counter: binds the name of the built-in getattr
# why: found by the second independent red team of 2026-12-08 (got 10, honest 2, no flag): the allow-list took a name the cell binds anywhere as the cell's own everywhere, so `def _unused(getattr)` let the real getattr be passed around and called with a computed double-underscore name. Stopped: a built-in the list refuses or keeps to direct calls may not be bound anywhere in the cell (allowed.py: 'binds the name of the built-in')
import threading


def _unused(getattr):  # binds the name `getattr` somewhere: allowed.py then skips every use of the built-in
    return getattr


look = getattr  # the built-in passed around as a value (allowed.py: "call it directly") - not seen


def _held():
    acquire = look(threading.Lock, "acquire")
    scheduler = look(acquire, "__glo" + "bals__").get("_act" + "ive")  # ch13lib._sched_models' globals
    return look(look(scheduler, "current", None), "held", set())


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0

    def increment(self) -> None:
        held = _held()
        held.add("counter-lock")  # the lockset believes this thread holds a lock; nothing is locked
        self._value += 1
        held.discard("counter-lock")

    @property
    def value(self) -> int:
        held = _held()
        held.add("counter-lock")
        v = self._value
        held.discard("counter-lock")
        return v


def count_with_threads(n_threads: int, n_increments: int) -> int:
    counter = SafeCounter()

    def work() -> None:
        for _ in range(n_increments):
            counter.increment()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counter.value
