"""Is the committed release exactly what nbgrader makes of source/, with nothing hidden in it?"""
from __future__ import annotations

import glob
import os

import nbformat
import pytest

from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells, hidden_test_cells, reference_solutions


def notebook_view(path: str) -> list[tuple]:
    """What matters of a notebook: each cell's type, source and nbgrader metadata."""
    nb = nbformat.read(path, as_version=4)
    return [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in nb.cells]


def files(folder: str) -> dict[str, bytes | list]:
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "**", "*"), recursive=True)):
        rel = os.path.relpath(path, folder)
        if os.path.isdir(path) or "__pycache__" in rel:
            continue
        out[rel] = notebook_view(path) if path.endswith(".ipynb") else open(path, "rb").read()
    return out


@pytest.mark.parametrize("kind", ["release", "solutions"])
def test_committed_folder_is_up_to_date(course, kind):
    committed = files(os.path.join(ROOT, kind, ASSIGNMENT))
    fresh = files(course.path(kind, ASSIGNMENT))
    assert sorted(committed) == sorted(fresh), f"{kind}/ is stale: run `make release` and commit it"
    for name in fresh:
        assert committed[name] == fresh[name], f"{kind}/{ASSIGNMENT}/{name} is stale: run `make release`"


def release_text() -> str:
    chunks = []
    for path in glob.glob(os.path.join(ROOT, "release", "**", "*"), recursive=True):
        if os.path.isfile(path):
            chunks.append(open(path, encoding="utf-8", errors="replace").read())
    return "\n".join(chunks)


def test_release_has_no_solution():
    text = release_text()
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    for path in glob.glob(os.path.join(ROOT, "release", ASSIGNMENT, "*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for gid, cell in answer_cells(nb).items():
            assert "raise NotImplementedError()" in cell.source, f"{gid}: no stub in the release"
    refs = reference_solutions()
    for gid, ref in refs.items():
        body = [line.strip() for line in ref.splitlines()
                if len(line.strip()) > 25 and not line.strip().startswith(("#", "def ", "class ", '"""'))]
        leaked = [line for line in body if line in text]
        # a line may appear in the release only where the stub keeps it (signatures, docstrings)
        assert len(leaked) <= len(body) // 2, f"{gid}: solution lines in the release: {leaked[:3]}"


def test_release_has_no_hidden_test_and_no_grader_code():
    text = release_text()
    assert "BEGIN HIDDEN TESTS" not in text
    for path in glob.glob(os.path.join(ROOT, "release", ASSIGNMENT, "*.ipynb")):
        for cell in hidden_test_cells(nbformat.read(path, as_version=4)).values():
            assert cell.source.lstrip().startswith("#"), "a test cell holds code"
    grader_lines = set()
    for path in glob.glob(os.path.join(ROOT, "graders", "*.py")):
        for line in open(path, encoding="utf-8"):
            line = line.strip()
            if len(line) > 30 and not line.startswith(("#", "import ", "from ", '"""')):
                grader_lines.add(line)
    leaked = sorted(line for line in grader_lines if line in text)
    assert not leaked, f"grader code in the release: {leaked[:5]}"
    assert not glob.glob(os.path.join(ROOT, "release", "**", "graders*"), recursive=True)
