"""kit/external_grade.py: autograde's first step starts every cell's grading before the kernel runs
the notebook; after the kernel, ExternalGrade collects exactly those verdicts, and grades again a
cell whose source changed in between (or when nothing was started)."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_notebook

from graders._catalogue import source as catalogue_source
from kit.external_grade import ExternalGrade, StartGrading
from kit.grading import plan

POINTS = sum(t["max_points"] for t in plan("amdahl")["tests"])


def _notebook(source: str):
    answer = new_code_cell(source, metadata={"nbgrader": {"grade_id": "amdahl", "solution": True}})
    test = new_code_cell(
        "# hidden tests", metadata={"nbgrader": {"grade_id": "test_amdahl", "grade": True, "points": POINTS}}
    )
    return new_notebook(cells=[answer, test])


def _score(nb) -> float:
    return float(nb.cells[1].outputs[-1].data["text/plain"])


def test_the_gradings_started_before_the_kernel_are_the_ones_collected():
    nb, resources = _notebook(catalogue_source("amdahl", "right_reference")), {}
    StartGrading().preprocess(nb, resources)
    started = resources["ch13_grading"]
    assert set(started) == {"amdahl"}
    future = started["amdahl"][1]
    future.result(timeout=300)  # graded while "the kernel" (nothing, here) would run
    ExternalGrade().preprocess(nb, resources)
    assert "ch13_grading" not in resources  # collected once
    assert _score(nb) == POINTS


def test_a_cell_changed_after_its_grading_started_is_graded_again():
    nb, resources = _notebook(catalogue_source("amdahl", "right_reference")), {}
    StartGrading().preprocess(nb, resources)
    nb.cells[0].source = catalogue_source("amdahl", "wrong_assert_checks")
    ExternalGrade().preprocess(nb, resources)
    assert _score(nb) < POINTS  # the source the notebook holds now, not the one first started


def test_without_a_start_the_cells_are_graded_after_the_kernel():
    nb = _notebook(catalogue_source("amdahl", "wrong_assert_checks"))
    ExternalGrade().preprocess(nb, {})
    assert _score(nb) < POINTS
