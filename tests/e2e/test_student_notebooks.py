"""What a student sees: every release notebook opened in JupyterLab in headless Chromium, all cells run.

- untouched (``stub``): every answer's self-check says clearly that it is not done, nothing claims
  to pass, and the only errors are the stubs' own ``NotImplementedError`` (so the release runs in a
  student's environment: ch13lib imports, the CUDA simulator is picked without a GPU, Ray starts);
- filled with the solution (``solved``, from the temp course's solutions/): Run All goes through
  without an error and every self-check shows ✔ and no ✘, each in at most SELF_CHECK_LIMIT_S.

The cells are run the way a student does: Run ▸ Run All Cells, and after a cell that raised,
select the next one and Run ▸ Run Selected Cell and All Below. Screenshots of every cell with
output, the saved notebook and the self-check timings go to the artifacts folder.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil

import nbformat
import pytest

from kit import ASSIGNMENT, ROOT, source_ch13lib
from kit.answers import answer_cells, nbgrader_meta
from kit.cells import TEST_PREFIX

from .lab import NotebookPage, errors_of, fresh_dir

source_ch13lib()  # the copy beside the notebooks
from ch13lib.cuda_env import gpu_present  # noqa: E402  (never imports numba)

NOTEBOOKS = sorted(
    os.path.basename(p)[:-6] for p in os.listdir(os.path.join(ROOT, "source", ASSIGNMENT)) if p.endswith(".ipynb")
)
NOT_DONE = re.compile(r"NotImplementedError|not implemented|not answered|not defined yet|尚未", re.I)
PASSED_CLAIM = re.compile(r"all (self-)?checks passed|setup OK", re.I)
# "Run in seconds": on 2 shared cores under a test suite, a generous bound; typical figures are 1-15 s.
SELF_CHECK_LIMIT_S = 120.0


def segments(nb) -> list[dict]:
    """For each answer cell: its grade_id, index, and the self-check cells between it and its test cell."""
    cells = nb.cells
    answers = [
        (i, nbgrader_meta(c)["grade_id"])
        for i, c in enumerate(cells)
        if c.cell_type == "code" and nbgrader_meta(c).get("solution")
    ]
    out = []
    for k, (i, gid) in enumerate(answers):
        end = len(cells)
        for j in range(i + 1, len(cells)):
            meta = nbgrader_meta(cells[j])
            if meta.get("grade_id") == TEST_PREFIX + gid or (meta.get("solution") and cells[j].cell_type == "code"):
                end = j
                break
        checks = [j for j in range(i + 1, end) if cells[j].cell_type == "code"]
        out.append({"grade_id": gid, "answer": i, "checks": checks, "end": end})
    return out


def seconds(cell) -> float | None:
    ex = cell.get("metadata", {}).get("execution", {})
    try:
        a = datetime.datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
        b = datetime.datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    return (b - a).total_seconds()


def run_in_browser(page, student_lab, student_folders, artifacts, variant: str, name: str):
    """Open ``<variant>/<name>.ipynb``, run everything, save; return (DOM cells, saved notebook, folder)."""
    folder = fresh_dir(os.path.join(artifacts, name, variant))
    nbp = NotebookPage(page, student_lab, f"{variant}/{name}.ipynb").open()
    try:
        runs = nbp.run_everything()
        nbp.save()
        shown = nbp.cells()
        nbp.screenshots(folder)
    finally:
        student_lab.shutdown_kernels()
    saved = nbformat.read(os.path.join(student_folders[variant], name + ".ipynb"), as_version=4)
    nbformat.write(saved, os.path.join(folder, name + ".ipynb"))
    assert len(shown) == len(saved.cells), "the page shows a different number of cells than the notebook has"
    timings = {f"cell{i:02d}": seconds(c) for i, c in enumerate(saved.cells) if c.cell_type == "code"}
    with open(os.path.join(folder, "timings.json"), "w", encoding="utf-8") as f:
        json.dump({"runs": runs, "seconds": timings}, f, indent=1)
    with open(os.path.join(folder, "page.json"), "w", encoding="utf-8") as f:
        json.dump(shown, f, indent=1, ensure_ascii=False)  # what each cell showed, as read from the page
    return shown, saved, folder


def excerpt(text: str, n: int = 600) -> str:
    return text if len(text) <= n else text[:n] + " …"


def stub_problems(shown: list[dict], nb) -> list[str]:
    """What is wrong with what an untouched release notebook shows (empty: nothing)."""
    problems = []
    for i, c in enumerate(shown):
        bad = [e for e in errors_of(c["text"]) if e != "NotImplementedError"]
        if bad:
            problems.append(f"cell {i} raised {bad[0]} in an untouched release notebook:\n{excerpt(c['text'])}")
    if "select_cuda_backend" in "".join(c.source for c in nb.cells) and os.environ.get("CH13_DEVICE") != "gpu":
        backend = "\n".join(c["text"] for c in shown if "CUDA backend" in c["text"])
        if not backend:
            problems.append("the first cell does not say which CUDA backend it picked")
        elif not gpu_present() and "simulator" not in backend:
            problems.append(f"no GPU here, yet the CUDA simulator was not picked automatically:\n{backend}")
    for seg in segments(nb):
        gid = seg["grade_id"]
        checks = "\n".join(shown[j]["text"] for j in seg["checks"])
        everything = "\n".join(shown[j]["text"] for j in range(seg["answer"], seg["end"]))
        if not checks.strip():
            problems.append(f"{gid}: no self-check output after the answer cell (cells {seg['checks']})")
        elif not NOT_DONE.search(checks):
            problems.append(
                f"{gid}: the self-check of an untouched stub does not say it is not done:\n{excerpt(checks)}"
            )
        if "✔" in everything or PASSED_CLAIM.search(everything):
            problems.append(f"{gid}: an untouched stub is shown as passing something:\n{excerpt(everything)}")
    return problems


def solved_problems(shown: list[dict], nb) -> list[str]:
    """What is wrong with what a notebook filled with the solutions shows (empty: nothing)."""
    problems = []
    for i, c in enumerate(shown):
        if errors_of(c["text"]):
            problems.append(
                f"cell {i} raised {errors_of(c['text'])[0]} with the solution filled in:\n{excerpt(c['text'])}"
            )
    for seg in segments(nb):
        gid = seg["grade_id"]
        checks = "\n".join(shown[j]["text"] for j in seg["checks"])
        if "✔" not in checks:
            problems.append(f"{gid}: no ✔ from its self-check with the solution filled in:\n{excerpt(checks)}")
        if "✘" in checks or NOT_DONE.search(checks):
            problems.append(f"{gid}: the self-check fails the reference solution:\n{excerpt(checks)}")
        for j in seg["checks"]:
            took = seconds(nb.cells[j])
            if took is not None and took > SELF_CHECK_LIMIT_S:
                problems.append(f"{gid}: self-check cell {j} took {took:.0f} s (limit {SELF_CHECK_LIMIT_S:.0f} s)")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_untouched_release_says_not_done(name, page, student_lab, student_folders, artifacts):
    shown, nb, folder = run_in_browser(page, student_lab, student_folders, artifacts, "stub", name)
    problems = stub_problems(shown, nb)
    assert not problems, f"{name} (untouched) (screenshots: {folder}):\n" + "\n\n".join(problems)


# make test runs the quiz solved in the browser; every notebook's references pass their self-checks
# there too (tests/test_selfchecks.py, in fresh processes), so the other solved notebooks' browser
# runs are make test-deep's.
IN_MAKE_TEST = "06_quiz"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n == IN_MAKE_TEST else pytest.mark.deep) for n in NOTEBOOKS]
)
def test_solved_notebook_passes_every_self_check(name, page, student_lab, student_folders, artifacts):
    shown, nb, folder = run_in_browser(page, student_lab, student_folders, artifacts, "solved", name)
    problems = solved_problems(shown, nb)
    assert not problems, f"{name} (solved) (screenshots: {folder}):\n" + "\n\n".join(problems)


HAN = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_WORDS = re.compile(r"\b(?:the|of|and|with|was|is|It ran|Replay it)\b")  # prose, not code
WRONG_ANSWER = ("02_cuda_kernels", "histogram", "wrong_plain_increment")  # a lost update: ✘ with a replay


@pytest.mark.slow
@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_failing_self_check_speaks_the_students_language(language, page, student_lab, student_folders, artifacts):
    """A student who chose a language (``lang.use`` in a cell, as README_STUDENTS.md says) reads
    a failing self-check in it alone: its ✘ lines, its explanation, the labels of its replay line."""
    from graders._catalogue import entry

    name, gid, wrong = WRONG_ANSWER
    variant = f"lang_{language}"
    folder = os.path.join(student_folders["root"], variant)
    if not os.path.isdir(folder):
        shutil.copytree(student_folders["stub"], folder)
    nb = nbformat.read(os.path.join(student_folders["stub"], name + ".ipynb"), as_version=4)
    answer_cells(nb)[gid].source = entry(gid, wrong).source
    nb.cells.insert(0, nbformat.v4.new_code_cell(f'from ch13lib import lang\nlang.use("{language}")'))
    nbformat.write(nb, os.path.join(folder, name + ".ipynb"))
    student_folders[variant] = folder

    shown, saved, where = run_in_browser(page, student_lab, student_folders, artifacts, variant, name)
    seg = next(s for s in segments(saved) if s["grade_id"] == gid)
    checks = "\n".join(shown[j]["text"] for j in seg["checks"])
    assert "✘" in checks and "cuda.atomic.add" in checks, f"({where})\n{excerpt(checks)}"
    if language == "zh":
        assert HAN.search(checks) and not ENGLISH_WORDS.search(checks), f"English in zh ({where}):\n{checks}"
    else:
        assert not HAN.search(checks), f"Chinese in en ({where}):\n{checks}"
