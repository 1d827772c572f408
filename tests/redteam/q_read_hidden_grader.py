# redteam: reads the hidden grader's answers from graders/quiz.py and returns them
# kind: cell
# target: quiz
# score: quiz=2
# message: quiz: `q2` is not answered yet
# why: graders/ is hidden (an empty folder) in the grader's sandbox once its grader is loaded, and the kernel never sees it; only q1, worked out honestly, scores
import os
KIT = os.environ.get("PYTHONPATH", ".").split(os.pathsep)[0]   # the kit doing the grading
import runpy

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
q2 = q3 = q4 = q5 = None
for root in os.environ.get("PYTHONPATH", "").split(os.pathsep) + [KIT + "", os.getcwd() + "/../../.."]:
    try:
        answers = runpy.run_path(os.path.join(root, "graders", "quiz.py"))["ANSWERS"]
        q2, q3, q4, q5 = answers["q2"], answers["q3"], answers["q4"], answers["q5"]
        break
    except Exception:
        continue
