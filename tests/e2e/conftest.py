"""Fixtures of the browser tests: Chromium, the artifacts folder, and a student's JupyterLab.

``CH13_E2E=require`` (what ``make test`` sets when it could install Chromium) turns a missing
browser into a failure instead of a skip. ``CH13_E2E_ARTIFACTS`` moves the screenshots (default:
``out/e2e/`` in the repository, ignored by git); the folder is printed at the start of the session.
"""

from __future__ import annotations

import os
import shutil

import nbformat
import pytest

from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells

from .lab import CHROMIUM, CHROMIUM_ARGS, JupyterLab, missing_tools

# The variables our test process sets for itself that a student's JupyterLab would not have.
_NOT_A_STUDENTS = ("NUMBA_", "CH13_", "NBGRADER_", "HYPOTHESIS_", "PYTEST_", "RAY_", "JUPYTER_", "CUDA_")


def student_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(_NOT_A_STUDENTS) or k == "CUDA_VISIBLE_DEVICES"}


@pytest.fixture(scope="session")
def e2e_tools():
    problem = missing_tools()
    if problem:
        if os.environ.get("CH13_E2E") == "require":
            pytest.fail(f"browser tests need {problem} (make test installs them as root: docs/e2e.md)")
        pytest.skip(f"browser tests need {problem}: see docs/e2e.md")


@pytest.fixture(scope="session")
def artifacts(request) -> str:
    # Each test empties its own subfolder: two pytest workers share this folder, and one emptying it
    # whole would delete what the other wrote.
    folder = os.path.abspath(os.environ.get("CH13_E2E_ARTIFACTS", os.path.join(ROOT, "out", "e2e")))
    os.makedirs(folder, exist_ok=True)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    line = f"e2e artifacts (screenshots, timings, JupyterLab logs): {folder}"
    if reporter:
        reporter.write_line("\n" + line)
    print(line)
    return folder


@pytest.fixture(scope="session")
def browser(e2e_tools):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(120_000)
    pg = context.new_page()
    yield pg
    context.close()


def fill_with_solutions(release_nb, solution_nb):
    """The release notebook with every answer cell replaced by the solution's: a student who is done."""
    solved = answer_cells(solution_nb)
    for gid, cell in answer_cells(release_nb).items():
        cell.source = solved[gid].source
    return release_nb


@pytest.fixture(scope="session")
def student_folders(course, tmp_path_factory) -> dict[str, str]:
    """Two copies of the release as a student gets it: ``stub`` untouched, ``solved`` with every answer
    cell filled from the temp course's solutions/."""
    home = tmp_path_factory.mktemp("student")
    release = course.path("release", ASSIGNMENT)
    out = {}
    for variant in ("stub", "solved"):
        dst = os.path.join(home, variant)
        shutil.copytree(release, dst)
        out[variant] = dst
    for name in os.listdir(release):
        if name.endswith(".ipynb"):
            nb = nbformat.read(os.path.join(release, name), as_version=4)
            sol = nbformat.read(course.path("solutions", ASSIGNMENT, name), as_version=4)
            nbformat.write(fill_with_solutions(nb, sol), os.path.join(out["solved"], name))
    out["root"] = str(home)
    return out


@pytest.fixture(scope="session")
def student_lab(e2e_tools, student_folders, artifacts, tmp_path_factory):
    """JupyterLab on the student's folder, with a student's environment (no grading variables)."""
    scratch = tmp_path_factory.mktemp("student-lab")
    lab = JupyterLab(student_folders["root"], str(scratch), env=student_env())
    lab.start()
    yield lab
    lab.stop()
    shutil.copy(lab.log_path, os.path.join(artifacts, "student-jupyterlab.log"))
