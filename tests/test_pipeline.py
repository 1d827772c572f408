"""Does `nbgrader autograde`, with the kit's config, score only what the answer cells honestly earn?

Every student below is graded in one real autograde run of a real course; the kernel-side exploits
measured against in-kernel grading (FIELD-NOTES) each get their own student, next to honest ones
whose scores must not move.
"""

from __future__ import annotations

import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from graders import grade_ids
from kit import ASSIGNMENT
from kit.answers import answer_cells, hidden_test_cells, reference_solutions
from tests.nbgrading import ADDRESS

pytestmark = pytest.mark.slow
PREFIX = "pl_"  # this module's students in the shared course

WRONG = {
    "quiz": "q1 = 10.0\nq2 = {'deadlock': 'A', 'livelock': 'B', 'starvation': 'C'}\nq3 = None\n"
    "q4 = {'allreduce': 'root', 'reduce': 'all'}\nq5 = 140.0\n",
    "amdahl": "def amdahl_speedup(p, n):\n    return 1 / ((1 - p) + p / n)\n",
}  # no input checks
HONEST_WRONG_SCORE = {"quiz": 0.0, "amdahl": 4.0}  # what WRONG earns on its own merits

# Exploits from the kernel that only an in-kernel grading would fall for. The kernel attacks on the
# machine (a gradebook write, os._exit, a swallowed interrupt, files planted in the course) are
# the red-team corpus's (tests/redteam/k_*), graded in the same course by tests/test_redteam.py.
EXPLOIT_CELLS = {
    "input_transformer": "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n",
    "fake_graders_module": "import sys, types\nm = types.ModuleType('graders')\nm.grade = lambda *a: 10.0\n"
    "sys.modules['graders'] = m\nsys.modules['graders.quiz'] = m\n",
    "display_formatter": "ip = get_ipython()\nip.display_formatter.formatters['text/plain'].for_type("
    "float, lambda x, p, c: p.text('10.0'))\nip.display_formatter.formatters['text/plain']"
    ".for_type(type(None), lambda x, p, c: p.text('10.0'))\n",
}


IN_PLACE_ANSWERS = {
    "q1": "5.26",
    "q2": '{"deadlock": "B", "livelock": "A", "starvation": "C"}',
    "q3": '{"order": ["thread", "warp", "block", "grid"], "warp_size": 32, "shared_memory_scope": "block"}',
    "q4": '{"allreduce": "all", "reduce": "root"}',
    "q5": "17.5",
}


def release_nb(course, name):
    return course.release_notebook(name)


def filled(course, answers, name="06_quiz"):
    nb = release_nb(course, name)
    for gid, cell in answer_cells(nb).items():
        if gid in answers:
            cell.source = answers[gid]
    return nb


@pytest.fixture(scope="module")
def graded(course):
    refs = reference_solutions()
    solutions = course.path("solutions", ASSIGNMENT)
    subs = {
        "reference": {
            n[:-6]: nbformat.read(os.path.join(solutions, n), as_version=4)
            for n in os.listdir(solutions)
            if n.endswith(".ipynb")
        },
        "untouched": {
            n[:-6]: release_nb(course, n[:-6])
            for n in os.listdir(course.path("release", ASSIGNMENT))
            if n.endswith(".ipynb")
        },
        "honest_wrong": {"06_quiz": filled(course, WRONG)},
    }
    for name, source in EXPLOIT_CELLS.items():
        nb = filled(course, WRONG)
        nb.cells.insert(1, new_code_cell(source))
        subs[f"exploit_{name}"] = {"06_quiz": nb}
    # answers that are right, with warnings and stderr output on the side: they cost nothing
    noisy = {
        gid: "import sys, warnings\nwarnings.warn('deprecated thing')\n"
        "print('debug output', file=sys.stderr)\n" + refs[gid]
        for gid in HONEST_WRONG_SCORE
    }
    subs["noisy_but_right"] = {"06_quiz": filled(course, noisy)}
    # a student who replaces each `...` of the quiz stub in place and touches nothing else
    in_place = release_nb(course, "06_quiz")
    cell = answer_cells(in_place)["quiz"]
    for name, value in IN_PLACE_ANSWERS.items():
        cell.source = cell.source.replace(f"{name} = ...", f"{name} = {value}", 1)
    subs["quiz_filled_in_place"] = {"06_quiz": in_place}
    # a student who edits the locked test cell to print full marks, and one who deletes it
    edited = filled(course, WRONG)
    for cell in hidden_test_cells(edited).values():
        cell.source = "print(10.0)\n10.0"
    subs["edited_locked_cell"] = {"06_quiz": edited}
    deleted = filled(course, WRONG)
    deleted.cells = [c for c in deleted.cells if c not in hidden_test_cells(deleted).values()]
    subs["deleted_locked_cells"] = {"06_quiz": deleted}
    # Students of this module only (the session's course also holds other modules' students):
    # one plain, serial `nbgrader autograde`, students picked by nbgrader's own glob.
    for student, notebooks in subs.items():
        course.submit(PREFIX + student, notebooks)
    proc = course.nbgrader("autograde", ASSIGNMENT, "--force", f"--student={PREFIX}*", check=False, timeout=1800)
    return {s: course.scores(PREFIX + s) for s in subs}, proc


def test_reference_solutions_get_full_marks(graded):
    scores, proc = graded
    assert sorted(scores["reference"]) == sorted(grade_ids()), proc.stderr[-3000:]
    for gid, cell in scores["reference"].items():
        assert cell.score == cell.max_score, f"{gid}:\n{cell.report}"
        assert not ADDRESS.search(cell.report), f"{gid}: a report that changes from run to run:\n{cell.report}"


def test_the_quiz_filled_in_place_gets_full_marks(graded):
    """The released quiz cell, each `...` replaced by a right answer and nothing else touched."""
    scores, _ = graded
    cell = scores["quiz_filled_in_place"]["quiz"]
    assert cell.score == cell.max_score == 10, cell.report


def test_untouched_release_gets_zero(graded):
    """Every test of every untouched stub fails, each saying why: not implemented (or answered) yet."""
    scores, _ = graded
    assert sorted(scores["untouched"]) == sorted(answer_cells_of_the_assignment())
    for gid, cell in scores["untouched"].items():
        assert cell.score == 0, f"{gid}:\n{cell.report}"
        lines = cell.report.strip().splitlines()
        fails = [i for i, line in enumerate(lines) if line.startswith("[FAIL]")]
        assert fails and not any(line.startswith("[PASS]") for line in lines), cell.report
        for i in fails:  # the lines under each failed test are its reason (Chinese, then English)
            why = " ".join(line.strip() for line in lines[i + 1 : i + 3])
            assert "not implemented yet" in why or "is not answered yet" in why or "(same reason as above)" in why, (
                f"{gid}: {why!r}\n{cell.report}"
            )


def answer_cells_of_the_assignment() -> list[str]:
    from graders import grade_ids

    return grade_ids()


def test_honest_wrong_answers_earn_their_honest_score(graded):
    scores, _ = graded
    for gid, want in HONEST_WRONG_SCORE.items():
        assert scores["honest_wrong"][gid].score == want, scores["honest_wrong"][gid].report


@pytest.mark.parametrize("exploit", sorted(EXPLOIT_CELLS) + ["edited_locked_cell", "deleted_locked_cells"])
def test_exploit_earns_nothing_it_did_not_earn_honestly(graded, exploit):
    scores, proc = graded
    student = exploit if exploit.endswith("cell") or exploit.endswith("cells") else f"exploit_{exploit}"
    got = scores[student]
    assert set(got) >= set(HONEST_WRONG_SCORE), f"{student} was not graded:\n{proc.stderr[-3000:]}"
    for gid, want in HONEST_WRONG_SCORE.items():
        assert got[gid].score == want, f"{student} {gid}:\n{got[gid].report}"
        assert got[gid].report.startswith(f"{gid}: {want:g} / "), got[gid].report


def test_exploits_harm_no_other_submission(graded, course):
    scores, _ = graded
    # the gradebook is intact and the honest students' scores are exactly theirs
    assert scores["reference"]["quiz"].score == 10 and scores["honest_wrong"]["quiz"].score == 0
    with open(course.path("gradebook.db"), "rb") as f:
        assert f.read(16) == b"SQLite format 3\x00"


def test_warnings_and_stderr_of_right_answers_cost_nothing(graded):
    scores, _ = graded
    for gid in HONEST_WRONG_SCORE:
        cell = scores["noisy_but_right"][gid]
        assert cell.score == cell.max_score, cell.report


def test_feedback_shows_messages_but_never_hidden_test_code(graded, course):
    course.nbgrader("generate_feedback", ASSIGNMENT, "--force", f"--student={PREFIX}honest_wrong")
    html = open(course.path("feedback", PREFIX + "honest_wrong", ASSIGNMENT, "06_quiz.html"), encoding="utf-8").read()
    assert "q1 is not right" in html and "smallest failing input" in html
    for hidden in ("def _check", "ANSWERS", "check_property", "EXPLAIN", "from graders"):
        assert hidden not in html
