# redteam: answers with int/float/dict subclasses whose == is always true (only once threads have run, so a naive pre-check passes)
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: must be plain data
# why: only exact built-in types cross from the subject to the judge; subclasses are refused, never compared
import threading


class Liar(float):
    def __eq__(self, other):
        return threading.active_count() >= 1

    __hash__ = float.__hash__


class LiarDict(dict):
    def __eq__(self, other):
        return True


q1 = Liar(1.0)
q2 = LiarDict()
q3 = LiarDict()
q4 = LiarDict()
q5 = Liar(0.0)
