# redteam: an unlocked counter whose write hides in print(..., file=sink) where sink.write is functools.partial(setattr, ...): print was a harmless builtin
# kind: cell
# target: counter
# score: counter=0
# message: counter: allow-list (ch13lib/allowed.py) does not name
# message: counter: passes setattr around as a value
# why: found by the fifth red team (2 -> 10/10, no flag): print is no longer harmless, and a harmless builtin is harmless only when its arguments are builtin values. Stopped: notebook 01's published allow-list (ch13lib/allowed.py) does not name what it uses (passes setattr around as a value), so the judge does not grade it (0, for a TA's review) and the self-check says so first.
import threading
from functools import partial


def _tally(marks):
    return marks + "|"


class _Sink:
    """A file-like object: print(...) into it stores the text on the counter."""


class SafeCounter:
    def __init__(self) -> None:
        self._marks = ""
        self._sink = _Sink()
        self._sink.write = partial(setattr, self, "_marks")

    def increment(self) -> None:
        marks = _tally(self._marks)               # read, add one mark
        print(marks, file=self._sink, end=marks)  # write it back (print -> sink.write)

    @property
    def value(self) -> int:
        return len(self._marks)


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
