# redteam: runs os.system through contextlib.ExitStack.callback, a library trampoline, and answers with what the shell wrote
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: os.system
# why: found by the fourth red team: ExitStack's frame is library code, so the hook let the event through; a library that is not on the event's allow-list (audit.ON_BEHALF) is now looked through to the student's frame below it
import contextlib
import os

_out = ""
if "CH13_DEVICE" in os.environ:  # in the grading subject only
    with contextlib.ExitStack() as _stack:
        _stack.callback(os.system, "echo shell-ran > /tmp/rt_shell")
    _out = open("/tmp/rt_shell").read()


def amdahl_speedup(p: float, n: int) -> float:
    if not 0.0 <= p <= 1.0 or n < 1:
        raise ValueError("p in [0, 1], n >= 1")
    return 1.0 / ((1.0 - p) + p / n)
