"""The score table a TA reads first: per student, per answer cell, with every flag in words."""

from __future__ import annotations

import collections
import html
import os
import re

import nbformat

from kit import ASSIGNMENT
from kit.answers import hidden_test_cells
from kit.course import Course
from kit.grading import VERDICTS_SUFFIX, read_verdicts


def _verdicts(course: Course, student: str):
    """(notebook file name, grade_id -> Verdict, or None when its verdicts file is missing or
    unreadable) for each of the student's autograded notebooks, in name order. Only files beside a
    notebook autograde wrote are read: nbgrader removes the notebook of a grading that failed."""
    folder = course.path("autograded", student, ASSIGNMENT)
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        if name.endswith(".ipynb"):
            try:
                yield name, read_verdicts(os.path.join(folder, name[: -len(".ipynb")] + VERDICTS_SUFFIX))
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                yield name, None


def _grader_problems(course: Course, student: str) -> list[str]:
    """The graders' problems (hangs, crashes, forged lines) and refusals, from the verdicts files."""
    out = []
    for name, verdicts in _verdicts(course, student):
        if verdicts is None:
            out.append(
                f"{name}: no readable verdicts beside the autograded notebook (graded by an older kit? regrade it)"
            )
            continue
        for gid, v in verdicts.items():
            if v.problem:
                said = [line.strip() for line in v.problem.splitlines() if line.strip()]
                out.append(f"{gid}: {' / '.join(said)}")  # a long problem is said on a line per language
            if v.tampered:
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


def _failures(course: Course, students: list[str], pictures: dict | None = None) -> collections.Counter:
    """(grade_id.test, first line of the reason) -> how many students, numbers folded to N; into
    ``pictures``, the first picture a grader drew for each such failure (base64 PNG). A failure
    for the same reason as the failed test before it counts once, as the report says."""
    seen: collections.Counter = collections.Counter()
    for student in students:
        for _, verdicts in _verdicts(course, student):
            for gid, v in (verdicts or {}).items():
                drawn = dict(v.pictures())  # those the feedback shows
                previous = None
                for r in v.results:
                    if r.passed:
                        continue
                    if r.message == previous:
                        continue
                    previous = r.message
                    reason = (r.message.splitlines() or [""])[0].strip()
                    key = (f"{gid}.{r.test}", re.sub(r"\b\d+(?:\.\d+)?\b", "N", reason)[:140])
                    seen[key] += 1
                    if pictures is not None and r.test in drawn and key not in pictures:
                        pictures[key] = drawn[r.test]
    return seen


def _histogram_svg(values: list[float], max_points: float, width=260, height=90) -> str:
    bins = collections.Counter(round(v, 2) for v in values)
    keys = sorted(set(bins) | {0.0, max_points})
    bar_w = max(4, (width - 20) // max(1, len(keys)))
    top = max(bins.values(), default=1)
    bars = []
    for i, k in enumerate(keys):
        h = int((height - 22) * bins.get(k, 0) / top)
        x = 10 + i * bar_w
        color = "#2e7d32" if k == max_points else ("#c62828" if k == 0 else "#f9a825")
        bars.append(
            f'<rect x="{x}" y="{height - 14 - h}" width="{bar_w - 2}" height="{h}" fill="{color}">'
            f'<title>{k:g} points: {bins.get(k, 0)} students</title></rect>'
            f'<text x="{x + bar_w / 2 - 1}" y="{height - 2}" font-size="9" text-anchor="middle">{k:g}</text>'
        )
    return f'<svg width="{width}" height="{height}" role="img">{"".join(bars)}</svg>'


def write_html(course: Course, runs, path: str) -> str:
    """The TA's first read: score distribution per exercise, most common failures, flags, table."""
    points = released_cells(course)
    students = [r.student for r in runs]
    scores = {s: course.scores(s) for s in students}
    parts = [
        "<!doctype html><meta charset='utf-8'><title>ch13_04 class report</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
        ".ex{display:inline-block;margin:0 1.5em 1em 0;vertical-align:top}"
        "td,th{padding:2px 8px;text-align:right}td:first-child{text-align:left}"
        "pre{background:#f6f6f6;padding:1em}</style>",
        f"<h1>ch13_04 — {len(students)} students</h1><h2>Score distribution per exercise</h2>",
    ]
    for gid, pts in points.items():
        vals = [(scores[s][gid].score or 0) if gid in scores[s] else 0.0 for s in students]
        mean = sum(vals) / len(vals) if vals else 0
        full = sum(v == pts for v in vals)
        parts.append(
            f"<div class='ex'><b>{html.escape(gid)}</b> ({pts:g} pts) — mean {mean:.1f}, "
            f"full marks {full}/{len(vals)}<br>{_histogram_svg(vals, pts)}</div>"
        )
    parts.append(
        "<h2>Most common failures</h2><table><tr><th>students</th>"
        "<th style='text-align:left'>test</th><th style='text-align:left'>reason</th></tr>"
    )
    pictures: dict = {}
    for (test, reason), n in _failures(course, students, pictures).most_common(20):
        png = pictures.get((test, reason))
        shown = (
            f"<details><summary>picture</summary><img style='max-width:100%' src='data:image/png;base64,{png}'>"
            "</details>"
            if png
            else ""
        )
        parts.append(
            f"<tr><td>{n}</td><td style='text-align:left'>{html.escape(test)}</td>"
            f"<td style='text-align:left'>{html.escape(reason)}{shown}</td></tr>"
        )
    parts.append("</table><h2>Scores and flags</h2><pre>" + html.escape(score_table(course, runs)) + "</pre>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    return path
