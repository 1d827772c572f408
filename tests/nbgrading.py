"""Grade many answer-cell sources through the real path: submitted notebooks -> nbgrader autograde."""

from __future__ import annotations

import re

from kit.classrun import grade_class
from kit.course import CellScore, Course

# What changes from run to run and so never belongs in a report: an object's address (a dict keyed
# by id(obj)), a memory address, a loopback port.
ADDRESS = re.compile(r"(?<![\w.])\d{12,}(?![\w.])|0x[0-9a-f]{8,}|127\.0\.0\.1:\d+")


def student_id(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def grade_answers(course: Course, submissions: dict[str, dict[str, str]]) -> dict[str, dict[str, CellScore]]:
    """submissions: student -> {grade_id: answer source}, graded by the kit's class runner: the plain
    `nbgrader autograde --student` per student, on every core."""
    for student, answers in submissions.items():
        course.submit(student, course.submission_from_answers(answers))
    runs = {r.student: r for r in grade_class(course, list(submissions), force=True, progress=None)}
    scores = {s: course.scores(s) for s in submissions}
    for s, got in scores.items():
        missing = [gid for gid in submissions[s] if gid not in got]
        assert not missing, f"{s}: no score for {missing}: {runs[s].problems}"
    return scores
