# redteam: copies the quiz answers out of other students' submitted and autograded notebooks
# kind: cell
# target: quiz
# score: quiz=2
# message: quiz: `q4` is not answered yet
# why: every course's submitted/, autograded/ and feedback/ are hidden from the kernel and the graders, and /tmp is a private tmpfs
import glob
import json
import os
KIT = os.environ.get("PYTHONPATH", ".").split(os.pathsep)[0]   # the kit doing the grading
import re

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
q2 = q3 = q4 = q5 = None
patterns = ["../../../*/*/ch13_04/06_quiz.ipynb", "/tmp/*/*/*/ch13_04/06_quiz.ipynb", "/tmp/*/*/*/*/ch13_04/06_quiz.ipynb",
            KIT + "/*/*/ch13_04/06_quiz.ipynb"]
for pattern in patterns:
    for path in glob.glob(pattern, recursive=True):
        if os.path.abspath(path).startswith(os.getcwd()) or "/release/" in path or "/source/" in path:
            continue  # its own notebook, and the public release: only other students' answers are worth copying
        try:
            text = json.dumps(json.load(open(path)))
        except Exception:
            continue
        m = re.search(r"q4 = (\{[^}]*\})", text.replace('\\"', '"').replace("\\'", "'"))
        if m and "all" in m.group(1):
            q4 = json.loads(m.group(1).replace("'", '"'))
