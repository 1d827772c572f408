"""Does every grader give full marks to each right answer and fail each wrong one with the right
message — through real `nbgrader autograde`, exactly as a TA grades?

The catalogues are files: tests/catalogue/<grade_id>/{right,wrong}_<name>.py, each the source of a
whole answer cell with a header (`# verdict: pass|fail`, `# message: <expected text>`, `# why: ...`).
"""
from __future__ import annotations

import glob
import os

import pytest

from tests.nbgrading import grade_answers, student_id

HERE = os.path.dirname(os.path.abspath(__file__))


def catalogue() -> list[tuple[str, str, str, list[str]]]:
    """(grade_id, name, source, expected messages) for every catalogue file; verdict in the name."""
    entries = []
    for path in sorted(glob.glob(os.path.join(HERE, "catalogue", "*", "*.py"))):
        grade_id = os.path.basename(os.path.dirname(path))
        name = os.path.basename(path)[:-3]
        with open(path, encoding="utf-8") as f:
            source = f.read()
        header = [line[1:].strip() for line in source.splitlines() if line.startswith("#")]
        verdicts = [h.split(":", 1)[1].strip() for h in header if h.startswith("verdict:")]
        messages = [h.split(":", 1)[1].strip() for h in header if h.startswith("message:")]
        assert verdicts in (["pass"], ["fail"]), f"{path}: needs one '# verdict: pass|fail' line"
        assert (verdicts[0] == "pass") == name.startswith("right_"), f"{path}: name and verdict disagree"
        assert verdicts[0] == "pass" or messages, f"{path}: a wrong answer needs '# message:' lines"
        entries.append((grade_id, name, source, messages))
    return entries


CATALOGUE = catalogue()


@pytest.fixture(scope="module")
def graded(course):
    """Every catalogue entry as its own student, graded in one autograde run."""
    subs = {student_id(f"{gid}__{name}"): {gid: source} for gid, name, source, _ in CATALOGUE}
    return grade_answers(course, subs)


@pytest.mark.slow
@pytest.mark.parametrize("grade_id,name,source,messages", CATALOGUE,
                         ids=[f"{e[0]}/{e[1]}" for e in CATALOGUE])
def test_catalogue_entry(graded, grade_id, name, source, messages):
    cell = graded[student_id(f"{grade_id}__{name}")][grade_id]
    if name.startswith("right_"):
        assert cell.score == cell.max_score, f"a right answer lost points:\n{cell.report}"
    else:
        assert cell.score < cell.max_score, f"a wrong answer got full marks:\n{cell.report}"
        for m in messages:
            assert m.lower() in cell.report.lower(), f"expected {m!r} in the feedback:\n{cell.report}"
