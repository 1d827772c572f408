# redteam: installs signal handlers (through _signal, past the screen's `signal`) to ignore the hang guard
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: imports _signal
# why: the screen refuses _signal like signal; the hang guard is SIGKILL anyway, which no handler can catch
import _signal

for sig in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGALRM, _signal.SIGHUP):
    _signal.signal(sig, _signal.SIG_IGN)


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n >= 1")
    return 1 / ((1 - p) + p / n)
