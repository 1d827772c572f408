# redteam: makes the subject's answers one byte short, so that a judge reading the frame would wait forever
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: not graded: this cell reaches into the process that grades it
# why: found by the white-box red team (the judge blocked until the outer 3x guard). The screen refuses the kit's import; and the judge now reads every frame under its hang guard, so a partial frame is a hang of that test (tests/test_judge.py)
from kit import wire


def _stall(channel):
    real = channel.encode
    channel.encode = lambda answer: real(answer)[:-1]


_stall(wire)


def amdahl_speedup(p, n):
    return 1.0
