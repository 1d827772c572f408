"""Build notebook cells with valid nbgrader (schema v3) metadata, the kit's conventions built in.

Conventions (docs/design.md): an answer cell has the contract's ``grade_id``; its hidden tests
live in ``graders/<grade_id>.py`` and its notebook holds one locked test cell ``test_<grade_id>``
whose points equal the grader's total. The test cell holds no test code: the kit's graders score
it from outside the kernel.
"""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

TEST_PREFIX = "test_"


def _meta(grade_id: str | None = None, *, grade=False, solution=False, locked=False, points=None):
    meta = {"schema_version": 3, "grade": grade, "solution": solution, "locked": locked}
    if grade_id is not None:
        meta["grade_id"] = grade_id
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def markdown(text: str, cell_id: str | None = None):
    """A locked markdown cell (students may not edit the teaching text)."""
    cell = new_markdown_cell(text.strip("\n"))
    if cell_id:
        cell.metadata.update(_meta(cell_id, locked=True))
    return cell


def code(source: str):
    """An ordinary code cell: demos and self-checks; students may run and edit it."""
    return new_code_cell(source.strip("\n"))


def answer(grade_id: str, source: str):
    """The answer cell: ``### BEGIN SOLUTION`` / ``### END SOLUTION`` regions become stubs."""
    cell = new_code_cell(source.strip("\n"))
    cell.metadata.update(_meta(grade_id, solution=True))
    return cell


def hidden_tests(grade_id: str, points: float):
    """The locked test cell whose score the kit's grader for ``grade_id`` decides."""
    source = (
        f"# Hidden tests for `{grade_id}` ({points:g} points) run outside this notebook when your work\n"
        f"# is graded; their verdicts and messages will appear here in your feedback.\n"
        f"# `{grade_id}` 的隐藏测试 ({points:g} 分) 在评分时于本 notebook 之外运行, 结果和说明会显示在这里。"
    )
    cell = new_code_cell(source)
    cell.metadata.update(_meta(TEST_PREFIX + grade_id, grade=True, locked=True, points=points))
    return cell


def notebook(cells) -> nbformat.NotebookNode:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write(nb, path: str) -> None:
    nbformat.validate(nb)
    nbformat.write(nb, path)
