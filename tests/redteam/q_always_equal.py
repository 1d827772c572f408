# redteam: answers are objects whose __eq__ is always True (and whose str looks right)
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: must be plain data
# why: the quiz grader compares plain data only (FIELD-NOTES: an always-true __eq__ passed == asserts)
class Anything(dict):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = None


class AnyFloat(float):
    def __eq__(self, other):
        return True


q1 = q5 = AnyFloat(0.0)
q2 = q3 = q4 = type("Any", (), {"__eq__": lambda self, other: True})()
