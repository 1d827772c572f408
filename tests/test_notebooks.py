"""Are the instructor notebooks well-formed, and do they match the contract and the graders?"""

from __future__ import annotations

import os

import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator

from graders import grade_ids, load_grader
from kit.answers import SOURCE_DIR, answer_cells, hidden_test_cells, nbgrader_meta, source_notebooks
from kit.contract import CONTRACT, NOTEBOOKS

NOTEBOOK_PATHS = source_notebooks()


def present(name: str) -> bool:
    return os.path.exists(os.path.join(SOURCE_DIR, name + ".ipynb"))


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=os.path.basename)
def test_notebook_validates_against_nbgrader_schema_v3(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    MetadataValidator().validate_nb(nb)  # raises on any schema-v3 violation
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta:
            assert meta["schema_version"] == 3


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=os.path.basename)
def test_grade_ids_are_unique_and_every_answer_has_its_test_cell(path):
    nb = nbformat.read(path, as_version=4)
    ids = [nbgrader_meta(c)["grade_id"] for c in nb.cells if nbgrader_meta(c).get("grade_id")]
    assert len(ids) == len(set(ids)), f"duplicate grade_ids in {path}"
    answers, tests = answer_cells(nb), hidden_test_cells(nb)
    assert set(answers) == set(tests), "each answer cell needs exactly one test_<grade_id> cell"
    for gid, cell in tests.items():
        meta = nbgrader_meta(cell)
        assert meta["locked"] and not meta["solution"]
        assert meta["points"] == load_grader(gid).max_points, f"{gid}: cell points != grader total"
        assert "BEGIN HIDDEN TESTS" not in cell.source  # the tests live in graders/, never here
    for gid, cell in answers.items():
        assert "### BEGIN SOLUTION" in cell.source, f"{gid}: no solution region: the release would show it"


@pytest.mark.parametrize("grade_id,notebook", sorted(CONTRACT.items()))
def test_contract_answer_cell_is_in_its_notebook(grade_id, notebook):
    if not present(notebook):
        pytest.skip(f"{notebook}.ipynb is not written yet")
    nb = nbformat.read(os.path.join(SOURCE_DIR, notebook + ".ipynb"), as_version=4)
    assert grade_id in answer_cells(nb)


def test_every_grader_has_an_answer_cell_and_back():
    cells = set()
    for path in NOTEBOOK_PATHS:
        cells |= set(answer_cells(nbformat.read(path, as_version=4)))
    assert cells == set(grade_ids())


def test_the_quiz_and_the_first_notebooks_exist():
    assert set(NOTEBOOKS) >= {"06_quiz"} and present("06_quiz")
