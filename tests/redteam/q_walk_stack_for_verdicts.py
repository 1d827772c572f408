# redteam: walks the stack (traceback.walk_stack, inspect.stack, sys._current_frames) looking for the verdict writer and the grader's locals, to mark every test passed
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: not graded
# why: the judge (which writes verdicts) is another process; in the subject the audit hook refuses frame walks asked for by the cell, whatever helper it goes through. The screen refuses these spellings before anything runs; the audit hook refuses them at run time when spelled otherwise (tests/test_judge.py)
import sys
import traceback

found = []
for frame, _ in traceback.walk_stack(None):
    found.append(frame.f_locals)
for frame in sys._current_frames().values():
    while frame is not None:
        if "emit" in frame.f_locals or "right" in frame.f_locals:
            frame.f_locals["right"] = True
        frame = frame.f_back
q1 = q2 = q3 = q4 = q5 = None
