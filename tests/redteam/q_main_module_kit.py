# redteam: a canary: looks for the kit through __main__ (the subject's `python -c "import sys, kit.subject"` left it in __main__'s globals, and `import __main__` raises no event); a right answer that turns wrong if it finds it
# kind: cell
# target: amdahl
# score: amdahl=5
# message: amdahl: flagged
# why: found by the fourth red team: the kit's modules left sys.modules but not __main__. The subject now empties __main__ before the cell runs (exec'd or forked)
import sys


def amdahl_speedup(p: float, n: int) -> float:
    if not 0.0 <= p <= 1.0 or n < 1:
        raise ValueError("p in [0, 1], n >= 1")
    main = sys.modules.get("__ma" + "in__")
    found = main is not None and vars(main).get("k" + "it") is not None
    return 1.0 / ((1.0 - p) + p / n) + (100.0 if found else 0.0)
