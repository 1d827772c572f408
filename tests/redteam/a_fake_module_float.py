# redteam: returns objects that declare a trusted __module__ (a float-like class claiming to be builtins' float) with an always-true ==
# kind: cell
# target: amdahl
# score: amdahl=1
# message: amdahl: cannot be sent to the grader
# why: the wire checks exact types (type(x) is float), never a declared __module__ or isinstance; the object never leaves the subject
class float_(float):
    __module__ = "builtins"
    __qualname__ = "float"

    def __eq__(self, other):
        return True

    def __le__(self, other):
        return True

    def __ge__(self, other):
        return True


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("bad input")
    return float_(1.0)
