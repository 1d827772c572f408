# redteam: the same walk to the subject's main loop, through a wrapper of a library the hook lets raise frame events itself (typing_extensions.deprecated calls whatever it wraps); a right answer that turns wrong if the walk succeeds
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: sys._getframe
# why: found while closing the fourth red team's trampolines: a library on the allow-list (audit.ON_BEHALF) speaks for itself only from code that names what it calls (audit.CALLS); its generic wrappers are trampolines like any other
import functools
import os
import warnings

import typing_extensions

warnings.simplefilter("ignore")
_frame_at = typing_extensions.deprecated("x")(functools.partial(functools.reduce(getattr, ["_getframe"], os.sys)))
_found = False
if "CH13_DEVICE" in os.environ:  # in the grading subject only
    _attr = functools.partial(functools.reduce, getattr)
    _f = _frame_at(0)
    while _f is not None:
        if _attr(["f_" + "code", "co_filename"], _f).endswith("subject.py"):
            _found = True
            break
        _f = _attr(["f_" + "back"], _f)


def amdahl_speedup(p: float, n: int) -> float:
    if not 0.0 <= p <= 1.0 or n < 1:
        raise ValueError("p in [0, 1], n >= 1")
    return 1.0 / ((1.0 - p) + p / n) + (100.0 if _found else 0.0)
