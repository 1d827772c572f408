"""Read answer cells out of notebooks: what the graders grade.

The one home of an answer cell's two versions: ``reference(grade_id)``, the instructor's solution
from source/ (nbgrader's solution markers removed), and ``stub(grade_id)``, what a student starts
from, read from the committed release (nbgrader made it; tests/test_release.py keeps it fresh).
"""

from __future__ import annotations

import glob
import os
import re

import nbformat

from kit import ASSIGNMENT, ROOT, SOURCE_DIR
from kit.cells import TEST_PREFIX

RELEASE_DIR = os.path.join(ROOT, "release", ASSIGNMENT)
_SOLUTION_MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*(\n|\Z)", re.M)
_SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def answer_cells(nb) -> dict[str, object]:
    """grade_id -> the first answer (solution) cell with that id."""
    found = {}
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and cell.cell_type == "code" and meta.get("grade_id"):
            found.setdefault(meta["grade_id"], cell)
    return found


def hidden_test_cells(nb) -> dict[str, object]:
    """answer grade_id -> its locked test cell (``test_<grade_id>``)."""
    found = {}
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id", "")
        if meta.get("grade") and cell.cell_type == "code" and gid.startswith(TEST_PREFIX):
            found.setdefault(gid[len(TEST_PREFIX) :], cell)
    return found


def strip_solution_markers(source: str) -> str:
    """The reference solution of a source answer cell, markers removed."""
    return _SOLUTION_MARKERS.sub("", source)


def solution_regions(source: str) -> list[str]:
    """The text inside each solution region of a source cell (what the release must not show)."""
    return _SOLUTION_REGION.findall(source)


def outside_solutions(source: str) -> str:
    """A source cell with its solution regions, markers included, removed (what the release shows)."""
    return _SOLUTION_REGION.sub("", source)


def source_notebooks() -> list[str]:
    return sorted(glob.glob(os.path.join(SOURCE_DIR, "*.ipynb")))


def reference_solutions() -> dict[str, str]:
    """grade_id -> reference solution source, from the instructor notebooks."""
    refs = {}
    for path in source_notebooks():
        nb = nbformat.read(path, as_version=4)
        for gid, cell in answer_cells(nb).items():
            refs[gid] = strip_solution_markers(cell.source)
    return refs


def reference(grade_id: str) -> str:
    """The reference solution of ``grade_id``, from its instructor notebook."""
    return reference_solutions()[grade_id]


def stub(grade_id: str) -> str:
    """The answer cell ``grade_id`` as the release gives it to students (each solution region
    replaced by nbgrader's stub, or by a pointer where the stub is filled in place: kit/stubs.py).
    Read from the release rather than rebuilt with a regex, so it is exactly what students get."""
    path = os.path.join(RELEASE_DIR, os.path.basename(notebook_of(grade_id)))
    return answer_cells(nbformat.read(path, as_version=4))[grade_id].source


def notebook_of(grade_id: str) -> str:
    """The source notebook holding the answer cell ``grade_id``."""
    for path in source_notebooks():
        if grade_id in answer_cells(nbformat.read(path, as_version=4)):
            return path
    raise KeyError(grade_id)
