"""The score table a TA reads first: per student, per answer cell, with every flag in words."""
from __future__ import annotations

import os

import nbformat

from kit import ASSIGNMENT
from kit.answers import hidden_test_cells
from kit.course import Course


def _grader_problems(course: Course, student: str) -> list[str]:
    """The '!!' lines of the graders' reports (hangs, crashes, tampering) in the autograded notebooks."""
    out = []
    folder = course.path("autograded", student, ASSIGNMENT)
    if not os.path.isdir(folder):
        return out
    for name in sorted(os.listdir(folder)):
        if name.endswith(".ipynb"):
            nb = nbformat.read(os.path.join(folder, name), as_version=4)
            for gid, cell in hidden_test_cells(nb).items():
                text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
                out += [f"{gid}: {line[3:]}" for line in text.splitlines() if line.startswith("!! ")]
                if "not graded: this cell reaches into the grading process" in text:
                    out.append(f"{gid}: flagged for review (tampering with the grader)")
    return out


def released_cells(course: Course) -> dict[str, float]:
    """answer grade_id -> points, in teaching order, from the release notebooks."""
    cells = {}
    folder = course.path("release", ASSIGNMENT)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".ipynb"):
            nb = nbformat.read(os.path.join(folder, name), as_version=4)
            for gid, cell in hidden_test_cells(nb).items():
                cells[gid] = float(cell.metadata["nbgrader"]["points"])
    return cells


def score_table(course: Course, runs) -> str:
    """One row per student, one column per answer cell; a cell never graded counts 0."""
    rows = []
    points = released_cells(course)
    cells = list(points)
    per_student = {run.student: course.scores(run.student) for run in runs}
    width = max([len(r.student) for r in runs] + [7])
    header = f"{'student':<{width}}  " + "  ".join(f"{g:>15}" for g in cells) + f"  {'total':>11}"
    rows.append(header)
    rows.append("-" * len(header))
    flags = []
    for run in runs:
        scores = per_student[run.student]
        got = {g: (scores[g].score or 0) if g in scores else 0.0 for g in cells}
        total, max_total = sum(got.values()), sum(points.values())
        line = f"{run.student:<{width}}  " + "  ".join(f"{got[g]:>7g}/{points[g]:<7g}" for g in cells)
        line += f"  {total:>5g}/{max_total:<5g}"
        rows.append(line)
        for p in run.problems + _grader_problems(course, run.student):
            flags.append(f"  {run.student}: {p}")
    if flags:
        rows += ["", "flags (read these first):"] + flags
    return "\n".join(rows)
