"""Benchmark: the autograde time of each notebook (a correct submission), with the kit's config and
with nbgrader's plain defaults on the same notebooks (kernel execution only, no graders, no sandbox),
then of the whole assignment in one `nbgrader autograde` each, as a TA runs it (the kit's zygotes
then start once for every notebook). Prints medians and the kit's overhead; asserts nothing.

    .venv/bin/python bench/bench_autograde.py [--runs 3] [--notebook 06_quiz ...] [--whole-only] [--after-kernel]

--after-kernel adds a third course: the kit's config with the gradings started after the kernel's
run instead of beside it (WarmJudges for StartGrading), to measure the overlap.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import nbformat

from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells
from kit.course import Course
from kit.release import generate

PLAIN_CONFIG = '''c = get_config()
c.CourseDirectory.course_id = "ch13_04_course"
c.CourseDirectory.solution_directory = "solutions"
'''

# The kit's config with WarmJudges as the first autograde step: the judges' zygote warms up while the
# kernel runs, and every grading starts after the kernel's run.
AFTER_KERNEL_CONFIG = """exec(open({kit!r}).read())
from kit.external_grade import WarmJudges
c.Autograde.autograde_preprocessors = [
    WarmJudges if p.__name__ == "StartGrading" else p for p in c.Autograde.autograde_preprocessors
]
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--notebook", action="append")
    ap.add_argument("--whole-only", action="store_true", help="only the whole assignment, not notebook by notebook")
    ap.add_argument("--after-kernel", action="store_true", help="also the kit grading after the kernel's run")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ch13-bench-autograde-")
    kit = Course.create(os.path.join(tmp, "kit"))
    generate(kit)
    plain = Course(os.path.join(tmp, "plain"))
    os.makedirs(plain.root)
    os.symlink(os.path.join(ROOT, "source"), plain.path("source"))
    with open(plain.path("nbgrader_config.py"), "w") as f:
        f.write(PLAIN_CONFIG)
    plain.generate()
    courses = [("kit", kit), ("plain", plain)]
    if args.after_kernel:
        os.makedirs(os.path.join(tmp, "after"))
        with open(os.path.join(tmp, "after", "nbgrader_config.py"), "w") as f:
            f.write(AFTER_KERNEL_CONFIG.format(kit=os.path.join(ROOT, "nbgrader_config.py")))
        after = Course.create(os.path.join(tmp, "after"))
        generate(after)
        courses.append(("after", after))
    names = args.notebook or sorted(
        n[:-6] for n in os.listdir(kit.path("solutions", ASSIGNMENT)) if n.endswith(".ipynb")
    )
    solution = {n: nbformat.read(kit.path("solutions", ASSIGNMENT, n + ".ipynb"), as_version=4) for n in names}
    for _, course in courses:
        course.submit("bench", solution)
    print(
        f"{'notebook':<22} {'kit (s)':>9} {'plain (s)':>10} {'overhead':>9}   (median of {args.runs}; "
        f"one `nbgrader autograde --notebook` each, CLI start included)"
    )
    total_kit = total_plain = 0.0
    for name in [] if args.whole_only else names:
        times = {}
        for label, course in courses[:2]:
            runs = []
            for _ in range(args.runs):
                t = time.perf_counter()
                course.nbgrader(
                    "autograde", ASSIGNMENT, "--student=bench", f"--notebook={name}", "--force", check=False
                )
                runs.append(time.perf_counter() - t)
            times[label] = statistics.median(runs)
        total_kit += times["kit"]
        total_plain += times["plain"]
        cells = set(answer_cells(solution[name]))
        full = all(c.score == c.max_score for g, c in kit.scores("bench").items() if g in cells)
        print(
            f"{name:<22} {times['kit']:9.1f} {times['plain']:10.1f} {times['kit'] - times['plain']:+8.1f}s"
            f"{'' if full else '   (not all full marks!)'}"
        )
    if total_plain:
        print(f"{'all notebooks':<22} {total_kit:9.1f} {total_plain:10.1f}   kit/plain x{total_kit / total_plain:.2f}")
    if args.notebook:
        return 0
    whole = {}
    for _ in range(args.runs):  # the courses in turn, so that a noisy minute costs each of them
        for label, course in courses:
            t = time.perf_counter()
            course.nbgrader("autograde", ASSIGNMENT, "--student=bench", "--force", check=False)
            whole.setdefault(label, []).append(time.perf_counter() - t)
    whole = {label: statistics.median(runs) for label, runs in whole.items()}
    full = all(c.score == c.max_score for _, course in courses[::2] for c in course.scores("bench").values())
    print(
        f"{'whole assignment':<22} {whole['kit']:9.1f} {whole['plain']:10.1f}   kit/plain "
        f"x{whole['kit'] / whole['plain']:.2f}   (one `nbgrader autograde` of every notebook)"
        f"{'' if full else '   (not all full marks!)'}"
    )
    if args.after_kernel:
        print(
            f"{'  graded after kernel':<22} {whole['after']:9.1f} {whole['plain']:10.1f}   kit/plain "
            f"x{whole['after'] / whole['plain']:.2f}   (WarmJudges: the gradings wait for the kernel)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
