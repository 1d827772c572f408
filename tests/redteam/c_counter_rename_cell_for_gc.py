# redteam: sets the cell's __name__ to ch13lib.* so the audit hook takes its gc.get_objects for the harness's, then rewrites kit.wire.to_plain
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: imports sys
# why: found by the second red team (2 -> 10/10): the hook judged frames by f_globals['__name__']; it now judges by the file the code was compiled from. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (imports sys), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import sys
import threading

__name__ = "ch13lib.answer"  # the audit hook judges trusted-only events (gc lists, trace hooks) by this name
_gc = sys.modules.get("gc")


def _forge(x, depth=0):
    if depth == 0 and type(x) is dict and "nonce" in x:
        x["refused"], x["tampered"] = [], []
        ok = x.get("ok")
        if type(ok) is dict and ok.get("ok") is False and "schedules" in ok:
            x["ok"] = {"ok": True, "schedules": 1, "exhaustive": True, "random_schedules": 0, "threads": 3}
    return _real(x, depth)


if _gc is not None:
    _wire = next(d for d in _gc.get_objects() if type(d) is dict and d.get("__name__") == "kit.wire")
    if not hasattr(_wire["to_plain"], "forged"):
        _real = _wire["to_plain"]
        _forge.forged = True
        _wire["to_plain"] = _forge


class SafeCounter:
    def __init__(self) -> None:
        self._value = 0

    def increment(self) -> None:
        self._value += 1

    @property
    def value(self) -> int:
        return self._value


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
