# redteam: kills the grading process with os.abort() after the first test passed
# kind: cell
# target: amdahl
# score: amdahl=4
# message: amdahl: killed by signal
# why: the crash costs the test that was running (the subject is restarted for the next one); the tests before and after it are graded on their merits. (The subject is pid 1 of its PID namespace, where os.abort ends as SIGSEGV rather than SIGABRT.)
import os

_calls = [0]


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n >= 1")
    _calls[0] += 1
    if _calls[0] > 150 and "CH13_DEVICE" in os.environ:     # during the second test
        os.abort()
    return 1 / ((1 - p) + p / n)
