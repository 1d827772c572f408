"""StartGrading's gradings ahead (kit/external_grade.py): a submission's first notebook starts the
gradings of its later notebooks from the submitted files; a later notebook takes one only where the
grade_id, the answer's source and the untouched flag are those it holds after its own sanitize
steps, and grades the cell again otherwise. grade_cell is replaced by a recorder here: what is
tested is which inputs get graded when (tests/test_pipeline.py grades real submissions this way)."""

from __future__ import annotations

import threading

import nbformat
import pytest
from traitlets import List
from traitlets.config import Configurable

from kit import ASSIGNMENT, ROOT
from kit import external_grade as eg
from kit.answers import answer_cells

RELEASE = f"{ROOT}/release/{ASSIGNMENT}"


@pytest.fixture
def graded(monkeypatch):
    """Every grade_cell call, as (grade_id, source, untouched); each returns its own marker."""
    calls, lock = [], threading.Lock()

    def grade_cell(grade_id, source, untouched=False, **_):
        with lock:
            calls.append((grade_id, source, untouched))
        return ("graded", grade_id, source)

    monkeypatch.setattr(eg, "grade_cell", grade_cell)
    monkeypatch.setattr(eg, "warm", lambda *a, **k: None)
    monkeypatch.setattr(eg, "_ahead", {})
    return calls


def _notebook(name: str, **answers: str):
    nb = nbformat.read(f"{RELEASE}/{name}.ipynb", as_version=4)
    for gid, source in answers.items():
        answer_cells(nb)[gid].source = source
    return nb


class Converter(Configurable):  # what StartGrading reads of nbgrader's converter: its notebooks
    notebooks = List()


def _step(paths: list[str]) -> eg.StartGrading:
    exporter = Configurable(parent=Converter(notebooks=paths))
    return eg.StartGrading(parent=exporter)


def _run(step, nb, notebook: str) -> dict:
    resources = {"nbgrader": {"student": "s1", "assignment": ASSIGNMENT, "notebook": notebook}}
    step.preprocess(nb, resources)
    return {gid: f.result() for gid, f in resources[eg._PENDING].items()}


def test_the_first_notebook_grades_the_later_ones_and_they_take_what_still_matches(tmp_path, graded):
    quiz = _notebook("06_quiz", amdahl="def amdahl_speedup(p, n):\n    return 1\n")
    nbformat.write(quiz, tmp_path / "06_quiz.ipynb")
    (tmp_path / "07_parallelism.ipynb").write_text("{ not json")  # its own turn says what is wrong
    first = _notebook("01_sync_primitives")
    paths = [str(tmp_path / f"{n}.ipynb") for n in ("01_sync_primitives", "06_quiz", "07_parallelism")]
    step = _step(paths)

    got = _run(step, first, "01_sync_primitives")
    assert sorted(got) == sorted(answer_cells(first))
    assert sorted(c[0] for c in graded) == sorted([*answer_cells(first), "amdahl", "quiz"])  # 06 ahead

    del graded[:]
    same = _run(step, nbformat.read(tmp_path / "06_quiz.ipynb", as_version=4), "06_quiz")
    assert graded == [] and same["amdahl"][2] == "def amdahl_speedup(p, n):\n    return 1\n"

    step = _step(paths)
    _run(step, first, "01_sync_primitives")
    del graded[:]
    changed = _notebook("06_quiz", amdahl="def amdahl_speedup(p, n):\n    return 2\n")  # after sanitize
    again = _run(step, changed, "06_quiz")
    assert graded == [("amdahl", "def amdahl_speedup(p, n):\n    return 2\n", False)]
    assert again["amdahl"][2].endswith("return 2\n") and again["quiz"] == same["quiz"]


def test_a_later_notebook_starts_nothing_ahead(tmp_path, graded):
    paths = [str(tmp_path / f"{n}.ipynb") for n in ("01_sync_primitives", "06_quiz")]
    quiz = _notebook("06_quiz")
    _run(_step(paths), quiz, "06_quiz")
    assert sorted(c[0] for c in graded) == ["amdahl", "quiz"]
    assert all(untouched for *_, untouched in graded)  # the release's stubs, as they are


def test_outside_nbgrader_each_notebook_grades_its_own(graded):
    quiz = _notebook("06_quiz")
    step = eg.StartGrading()
    assert sorted(_run(step, quiz, "06_quiz")) == ["amdahl", "quiz"]
    assert sorted(c[0] for c in graded) == ["amdahl", "quiz"]
