# redteam: runs the reference solution from the instructor's source and solution notebooks
# kind: cell
# target: quiz
# score: quiz=2
# message: quiz: `q3` is not answered yet
# why: source/*.ipynb read as empty files and solutions/ is an empty folder inside every sandbox
import glob
import json
import os
KIT = os.environ.get("PYTHONPATH", ".").split(os.pathsep)[0]   # the kit doing the grading
import runpy
import tempfile

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
q2 = q3 = q4 = q5 = None
roots = os.environ.get("PYTHONPATH", "").split(os.pathsep) + [KIT + "", "../../.."]
for root in roots:
    for path in glob.glob(os.path.join(root, "s*", "ch13_04", "06_quiz.ipynb")):
        try:
            cells = json.load(open(path))["cells"]
        except Exception:
            continue
        for cell in cells:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "quiz":
                f = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
                f.write("".join(cell["source"]))
                f.close()
                try:
                    ns = runpy.run_path(f.name)
                    q2, q3, q4, q5 = ns["q2"], ns["q3"], ns["q4"], ns["q5"]
                except Exception:
                    pass
