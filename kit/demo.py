"""The main job on the bundled demo class: generate -> autograde -> feedback -> export, then a table.

    python -m kit.demo [--course out/demo] [--jobs N]

The demo course lives in out/demo (ignored by git), so a TA's real gradebook is never touched. Its
students are built from the current release, so they never go stale:
  ada    the reference solution of every cell
  ben    partly wrong: one realistic mistake from the kit's catalogue in every other cell
  cy     tries to cheat from inside the kernel (input transformer, gradebook write, fake graders
         module, display formatter) and from the answer cell (reaching into the grader process)
  di     hangs: an answer that loops forever, a cell that swallows KeyboardInterrupt, os._exit
  ed     a broken notebook (invalid JSON) beside correct ones
  fay    hands in one notebook only, with a foreign kernelspec and a deleted locked cell
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import time

import nbformat
from nbformat.v4 import new_code_cell

from graders import _catalogue as catalogue
from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells, hidden_test_cells, reference_solutions
from kit.classrun import grade_class
from kit.course import Course
from kit.report import score_table, write_html

KERNEL_CHEATS = '''
# cy: every kernel-side trick measured against in-kernel grading (FIELD-NOTES)
import sys, types, glob
ip = get_ipython()
ip.input_transformers_cleanup.append(lambda lines: ["pass\\n"])          # turn later cells into `pass`
fake = types.ModuleType("graders"); fake.grade = lambda *a, **k: 10.0
sys.modules["graders"] = fake                                             # a fake hidden-test module
ip.display_formatter.formatters["text/plain"].for_type(float, lambda x, p, c: p.text("10.0"))
for db in glob.glob("../../../*.db"):
    try:
        open(db, "wb").write(b"pwned")                                    # wreck the gradebook
    except OSError as e:
        print("gradebook write refused:", e)
'''
HANG_FOREVER = '''
import time
while True:                       # di: swallows the interrupt nbgrader sends on a timeout
    try:
        time.sleep(1)
    except KeyboardInterrupt:
        pass
'''


def first_wrong(grade_id: str) -> str | None:
    wrong = [e for e in catalogue.entries(grade_id) if e.name.startswith("wrong_")]
    return wrong[0].source if wrong else None


def build_class(course: Course) -> None:
    refs = reference_solutions()
    release = {
        os.path.basename(p)[:-6]: nbformat.read(p, as_version=4)
        for p in sorted(glob.glob(course.path("release", ASSIGNMENT, "*.ipynb")))
    }

    def filled(name: str, answers: dict[str, str]):
        nb = nbformat.from_dict(nbformat.reads(nbformat.writes(release[name]), as_version=4))
        for gid, cell in answer_cells(nb).items():
            if gid in answers:
                cell.source = answers[gid]
        return nb

    all_ids = sorted(refs)
    partial = {
        gid: (first_wrong(gid) if i % 2 == 0 and first_wrong(gid) else refs[gid]) for i, gid in enumerate(all_ids)
    }
    course.submit("ada", {n: filled(n, refs) for n in release})
    course.submit("ben", {n: filled(n, partial) for n in release})

    cheat = filled(
        "06_quiz",
        {
            "quiz": "q1 = 10.0\nq2 = q3 = q4 = None\nq5 = 140.0\n",
            "amdahl": "import sys\nsys.modules['graders.amdahl'] = None\ndef amdahl_speedup(p, n):\n    return 1.0\n",
        },
    )
    cheat.cells.insert(1, new_code_cell(KERNEL_CHEATS))
    course.submit("cy", {"06_quiz": cheat})

    hang = filled(
        "06_quiz", {"quiz": refs["quiz"], "amdahl": "def amdahl_speedup(p, n):\n    while True:\n        pass\n"}
    )
    hang.cells.append(new_code_cell(HANG_FOREVER))
    hang.cells.append(new_code_cell("import os\nos._exit(1)   # kills the kernel"))
    course.submit("di", {"06_quiz": hang})

    broken = {n: filled(n, refs) for n in release}
    broken["06_quiz"] = nbformat.writes(broken["06_quiz"])[:-200]  # cut short: invalid JSON
    course.submit("ed", broken)

    lone = filled("06_quiz", refs)
    lone.metadata["kernelspec"] = {"name": "julia-1.9", "display_name": "Julia 1.9", "language": "julia"}
    lone.cells = [
        c
        for c in lone.cells
        if c not in hidden_test_cells(lone).values() or c.metadata["nbgrader"]["grade_id"] != "test_quiz"
    ]
    course.submit("fay", {"06_quiz": lone})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kit.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--course", default=os.path.join(ROOT, "out", "demo"))
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args(argv)
    shutil.rmtree(args.course, ignore_errors=True)
    course = Course.create(args.course)
    t0 = time.perf_counter()
    print(f"demo course: {course.root}\n1/5 generate_assignment")
    course.generate()
    build_class(course)
    print("2/5 autograde (the kit's class runner: plain `nbgrader autograde` per student, in parallel)")
    runs = grade_class(course, jobs=args.jobs, force=True)
    print("3/5 generate_feedback")
    course.nbgrader("generate_feedback", ASSIGNMENT, "--force", check=False)
    print("4/5 export")
    course.nbgrader("export", "--to", course.path("grades.csv"), check=False)
    print(f"5/5 scores ({time.perf_counter() - t0:.0f} s in all)\n")
    print(score_table(course, runs))
    report = write_html(course, runs, course.path("report.html"))
    print(f"\nreport: {report}\nfeedback: {course.path('feedback')}\nLMS export: {course.path('grades.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
