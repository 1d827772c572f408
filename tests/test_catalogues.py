"""Does every grader give full marks to each right answer and fail each wrong one with the right
message — through real `nbgrader autograde`, exactly as a TA grades?

The catalogues are files: graders/catalogue/<grade_id>/{right,wrong}_<name>.py, each the source of a
whole answer cell with a header (`# verdict: pass|fail`, `# message: <expected text>`, `# why: ...`),
read by graders/_catalogue.py.
"""

from __future__ import annotations

import pytest

from graders._catalogue import entries
from tests.nbgrading import grade_answers, student_id

# (grade_id, name, source, expected messages) for every catalogue file; the verdict is in the name.
CATALOGUE = [(e.grade_id, e.name, e.source, e.messages) for e in entries()]


def _check(report: str, score: float, max_score: float, name: str, messages: list[str]) -> None:
    if name.startswith("right_"):
        assert score == max_score, f"a right answer lost points:\n{report}"
    else:
        assert score < max_score, f"a wrong answer got full marks:\n{report}"
        for m in messages:
            assert m.lower() in report.lower(), f"expected {m!r} in the feedback:\n{report}"


@pytest.fixture(scope="module")
def verdicts():
    """Every entry graded once by kit.grading.grade_cell — the judge process and its sandboxed
    subject, exactly as nbgrader's autograde calls them — as many at a time as the class runner."""
    from concurrent.futures import ThreadPoolExecutor

    from kit.classrun import default_jobs
    from kit.grading import grade_cell

    with ThreadPoolExecutor(default_jobs()) as pool:
        futures = {(gid, name): pool.submit(grade_cell, gid, source) for gid, name, source, _ in CATALOGUE}
        return {k: f.result() for k, f in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("grade_id,name,source,messages", CATALOGUE, ids=[f"{e[0]}/{e[1]}" for e in CATALOGUE])
def test_catalogue_entry(verdicts, grade_id, name, source, messages):
    verdict = verdicts[(grade_id, name)]
    _check(verdict.report(), verdict.score, verdict.max_score, name, messages)


def _round_trip_entries() -> dict[str, list[tuple[str, str, str, list[str]]]]:
    """Per grade_id: its reference (or first right) answer and its first wrong answer."""
    out: dict[str, list] = {}
    for gid, name, source, messages in CATALOGUE:
        picked = out.setdefault(gid, [])
        kinds = {n.split("_")[0] for _, n, _, _ in picked}
        if name.split("_")[0] not in kinds:
            picked.append((gid, name, source, messages))
    return out


ROUND_TRIPS = _round_trip_entries()


@pytest.fixture(scope="module")
def graded(course):
    """One right and one wrong answer per grade_id, each as its own student, in one autograde run."""
    subs = {
        student_id(f"{gid}__{name}"): {gid: source}
        for entries in ROUND_TRIPS.values()
        for gid, name, source, _ in entries
    }
    return grade_answers(course, subs)


@pytest.mark.slow
@pytest.mark.parametrize(
    "grade_id,name,source,messages",
    [e for entries in ROUND_TRIPS.values() for e in entries],
    ids=[f"{e[0]}/{e[1]}" for entries in ROUND_TRIPS.values() for e in entries],
)
def test_nbgrader_round_trip(graded, grade_id, name, source, messages):
    """Through the plain `nbgrader autograde` a TA runs: the score lands in the gradebook."""
    cell = graded[student_id(f"{grade_id}__{name}")][grade_id]
    _check(cell.report, cell.score, cell.max_score, name, messages)
