# redteam: opens its own memory for writing (/proc/self/mem), from where any object of the subject can be rewritten: the audit hook's tables, a harness's counters, an int in place
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: Permission denied: '/proc/self/mem'
# why: the subject is not dumpable (kit.audit.seal_memory, before the cell loads), so the kernel refuses /proc/self/mem to it (and /proc/PID/mem and ptrace to every process of its uid); a canary: were it ever opened, this cell would earn full marks without deserving them
import os

try:
    MEMORY = open("/proc/self/mem", "r+b", 0) if "CH13_DEVICE" in os.environ else None
    WHY = ""
except OSError as e:
    MEMORY, WHY = None, str(e)


def amdahl_speedup(p: float, n: int) -> float:
    if MEMORY is None:
        raise RuntimeError(WHY or "the kernel's copy does not try")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return 1.0 / ((1.0 - p) + p / n)
