"""Is the committed release exactly what nbgrader makes of source/, with nothing hidden in it?"""

from __future__ import annotations

import ast
import glob
import inspect
import os
import re

import nbformat
import pytest

from graders import grade_ids, load_grader
from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells, hidden_test_cells, outside_solutions, solution_regions, source_notebooks
from kit.stubs import IN_PLACE_POINTER


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


def release_code() -> str:
    """The code cells of the release notebooks (teaching text may quote the chapter's formulas)."""
    return "\n".join(
        c.source
        for path in glob.glob(os.path.join(ROOT, "release", ASSIGNMENT, "*.ipynb"))
        for c in nbformat.read(path, as_version=4).cells
        if c.cell_type == "code"
    )


def test_release_has_no_solution():
    assert "BEGIN SOLUTION" not in release_text() and "END SOLUTION" not in release_text()
    text = release_code()
    for path in glob.glob(os.path.join(ROOT, "release", ASSIGNMENT, "*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for gid, cell in answer_cells(nb).items():
            if cell.metadata.get("ch13", {}).get("stub") == "in_place":  # kit/stubs.py: the quiz
                assert IN_PLACE_POINTER in cell.source and "raise" not in cell.source, gid
                assert re.search(r"^\w+ = \.\.\.", cell.source, re.M), f"{gid}: no `name = ...` stub"
            else:
                assert "raise NotImplementedError()" in cell.source, f"{gid}: no stub in the release"
    for gid, lines in solution_region_lines().items():
        leaked = [line for line in lines if line in text]
        assert not leaked, f"{gid}: solution lines in the release: {leaked[:3]}"


def solution_region_lines() -> dict[str, list[str]]:
    """grade_id -> the distinctive lines found only inside its answer cell's solution regions
    (a line the instructor also shows elsewhere, say a demo of the index formula, is no leak)."""
    out = {}
    notebooks = [nbformat.read(path, as_version=4) for path in source_notebooks()]
    shown = set()
    for nb in notebooks:
        for cell in nb.cells:
            if cell.cell_type == "code":
                outside = outside_solutions(cell.source)
                shown |= {line.strip() for line in outside.splitlines()}
    for nb in notebooks:
        for gid, cell in answer_cells(nb).items():
            regions = solution_regions(cell.source)
            out[gid] = [
                line.strip()
                for region in regions
                for line in region.splitlines()
                if len(line.strip()) > 25 and not line.strip().startswith("#") and line.strip() not in shown
            ]
    return out


def test_release_has_no_hidden_test_and_no_grader_code():
    text = release_text()
    assert "BEGIN HIDDEN TESTS" not in text
    for path in glob.glob(os.path.join(ROOT, "release", ASSIGNMENT, "*.ipynb")):
        for cell in hidden_test_cells(nbformat.read(path, as_version=4)).values():
            assert cell.source.lstrip().startswith("#"), "a test cell holds code"
    flat = " ".join(text.split())
    leaked = []
    for gid in grade_ids():
        for t in load_grader(gid).tests:
            lines = [" ".join(line.split()) for line in inspect.getsource(t.func).splitlines()]
            lines = [line for line in lines if len(line) > 12 and not line.startswith(("#", "@", "def ", '"""'))]
            # three consecutive lines of a hidden test found in the release would be a leak
            leaked += [f"{gid}.{t.name}" for i in range(len(lines) - 2) if " ".join(lines[i : i + 3]) in flat]
    assert not leaked, f"hidden test code in the release: {sorted(set(leaked))}"
    for hidden in ("graders*", "catalogue*"):  # graders/ and its catalogue of answers stay out
        assert not glob.glob(os.path.join(ROOT, "release", "**", hidden), recursive=True)


def test_committed_plans_are_up_to_date():
    """graders/plans.json is what the graders declare now (grading reads it instead of asking them)."""
    from kit.release import PLANS, plans_text

    with open(PLANS, encoding="utf-8") as f:
        committed = f.read()
    assert committed == plans_text(), "graders/plans.json is stale: run `make release` and commit it"


# Code that would import the kit: `import kit`, `from kit(.x) import y`, also inside a string a process runs.
KIT_IMPORT = re.compile(r"\bfrom\s+kit(\.\w+)*\s+import\b|(^|[\s;(])import\s+kit\b|__import__\(\s*['\"]kit\b")


def kit_imports(tree: ast.AST, where: str) -> list[str]:
    """The imports of kit in ``tree``, and in every string constant in it that would import kit
    when run (a ``python -c`` child's code, an ``import_module`` argument)."""
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if KIT_IMPORT.search(node.value):
                found.append(f"{where}:{node.lineno}: a string that imports kit")
            elif re.fullmatch(r"kit(\.\w+)*", node.value.strip()):
                found.append(f"{where}:{node.lineno}: the module name {node.value!r}")
        found += [f"{where}:{node.lineno}: import {n}" for n in names if n == "kit" or n.startswith("kit.")]
    return found


def test_released_library_imports_nothing_of_the_kit():
    """ch13lib ships to students without the kit: no module of it imports kit, and no code it runs
    elsewhere (a child's ``-c`` text) does. What grading needs of the kit, the subject hands over."""
    folder = os.path.join(ROOT, "release", ASSIGNMENT, "ch13lib")
    paths = sorted(glob.glob(os.path.join(folder, "**", "*.py"), recursive=True))
    assert len(paths) > 20, folder
    found = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            found += kit_imports(ast.parse(f.read(), path), os.path.relpath(path, ROOT))
    assert not found, "the released ch13lib imports the kit:\n" + "\n".join(found)
    planted = "import json\nCHILD = 'import sys\\nfrom kit.subject import Cell\\n'\nfrom kit import audit\n"
    assert len(kit_imports(ast.parse(planted), "x")) == 2  # the check sees both forms


# The harness interface (kit/harness.py) and the names grading-only functions go by: a rank's
# harness (``rank_*``, ``serve_rank``, ``RemoteComm``) and the subject's side of a check (``subject_*``).
GRADING_INTERFACE = frozenset({"SUBJECT_API", "RANK_API", "CHILD_API", "subject_setup"})
GRADING_PREFIXES = ("subject_", "rank_", "serve_rank", "RemoteComm")
# What of it the released ch13lib still holds, module by module: names the rule matches that are not
# grading code, since the self-checks run them too (what only grading runs is in kit/harnesses/):
# ``cell.rank_copies`` gives each rank of a threads world its own copy of the cell (the self-checks'
# worlds, collective_checks and parallel_sim's ``observe_*``), and ``parallel_cases.rank_inputs`` is
# what each rank of a case is given (the ZeRO self-check's threads world builds its ranks from it).
GRADING_LEFT = {
    "cell": {"rank_copies"},
    "parallel_cases": {"rank_inputs"},
}


def grading_names(tree: ast.Module) -> set[str]:
    """The module's top-level names (defs, classes, assignments) that are grading code by name."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {n for n in names if n in GRADING_INTERFACE or n.startswith(GRADING_PREFIXES)}


def test_released_library_holds_no_grading_code():
    """What only grading needs lives in kit/harnesses/, which is never released. The rule is by
    name: a released ch13lib module that defines a harness entry list or ``subject_setup``
    (kit/harness.py), or a top-level name with a grading prefix (``subject_``, ``rank_``,
    ``serve_rank``, ``RemoteComm``), holds grading code. GRADING_LEFT lists what has not moved
    yet, exactly: a new grading name fails, and so does one that moved while still listed."""
    folder = os.path.join(ROOT, "release", ASSIGNMENT, "ch13lib")
    found = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.py"))):
        with open(path, encoding="utf-8") as f:
            names = grading_names(ast.parse(f.read(), path))
        if names:
            found[os.path.basename(path)[:-3]] = names
    assert found == GRADING_LEFT
    assert not glob.glob(os.path.join(ROOT, "release", "**", "harnesses"), recursive=True)
    planted = ast.parse(
        "SUBJECT_API = ()\ndef subject_x(cell): pass\ndef observe(cell): pass\nclass RemoteComm: pass\n"
    )
    assert grading_names(planted) == {"SUBJECT_API", "subject_x", "RemoteComm"}  # the rule sees each form
