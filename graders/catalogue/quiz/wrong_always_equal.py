# verdict: fail
# sample: q1
# message: must be plain data
# why: answers are objects whose __eq__ is always True (passes naive == asserts)
class Yes(dict):
    def __eq__(self, other):
        return True
class YesFloat(float):
    def __eq__(self, other):
        return True
q1 = YesFloat(0)
q2 = Yes()
q3 = Yes()
q4 = Yes()
q5 = YesFloat(0)
