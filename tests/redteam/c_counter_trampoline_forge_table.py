# redteam: walks to the subject's main loop through a library trampoline (weakref.finalize calls what it is given) and rewrites its harness table, so every check of an unlocked counter answers "ok"
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: imports os
# why: found by the fourth red team (2 -> 10/10, no flag, in both launch modes): the hook blamed the nearest frame that was not a helper, and weakref's frame is library code. A library frame now raises a refused event for a student's stack only if that library is on the event's allow-list (audit.ON_BEHALF) or is being imported. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (imports os), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import functools
import os
import threading
import weakref


class SafeCounter:
    def __init__(self) -> None:
        self.n = 0

    def increment(self) -> None:
        self.n += 1

    @property
    def value(self) -> int:
        return self.n


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


class _O:
    pass


def _via(fn, *args):
    return weakref.finalize(_O(), fn, *args)()


def _forged(cell, *args, **kwargs):
    return {"ok": True, "message": "", "example": "", "threads": 99}


if "CH13_DEVICE" in os.environ:  # in the grading subject only
    _frame = _via(functools.reduce(getattr, ["_getframe"], os.sys), 1)
    while _frame is not None:
        if _frame.f_code.co_name == "main" and _frame.f_code.co_filename.endswith("subject.py"):
            _table = _via(getattr, _frame, "f_locals")["table"]
            for _k in list(_table):
                _table[_k] = _forged
            break
        _frame = _via(getattr, _frame, "f_back")
