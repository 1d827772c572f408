# redteam: rewrites another student's submitted and autograded notebooks, and plants files in the course
# kind: kernel
# message: notebook: refused
# why: submitted/, autograded/ (but the student's own folder, a private copy) and feedback/ are hidden, the kit is read-only to the job's uid
import glob
import os
KIT = os.environ.get("PYTHONPATH", ".").split(os.pathsep)[0]   # the kit doing the grading

targets = glob.glob("../../../submitted/__OTHER__/*/*.ipynb") + glob.glob("../../../autograded/__OTHER__/*/*.ipynb")
targets += ["../../../submitted/__OTHER__/ch13_04/06_quiz.ipynb", "../../../graders_fake.py",
            KIT + "/graders/quiz.py", KIT + "/kit/__MARKER__-planted.py"]
for path in targets:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("{}")
        print("wrote", path)
    except OSError as e:
        print("refused:", type(e).__name__)
