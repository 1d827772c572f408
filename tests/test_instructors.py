"""docs/instructors.md's worked example ("Adding an exercise"), built from the page's own code
blocks: the recipe works as written, and its table of files and lines is true.

The kit grades only the exercises of the checkout it is imported from (the page says why), and tests
run side by side, so the example never goes into this checkout: the deep test copies the kit's code
into a temporary course, writes the page's files there, and runs every command in it with the copy
first on PYTHONPATH and as the working directory (Python searches both before the venv's editable
install, so the copy's ``kit.ROOT`` is the copy).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from kit import ASSIGNMENT, ROOT, source_ch13lib
from kit.answers import answer_cells, hidden_test_cells
from kit.course import Course, nbgrader_env

DOC = os.path.join(ROOT, "docs", "instructors.md")
GRADE_ID = "parallel_sum"
NOTEBOOK = "08_parallel_sum"
# A block the recipe writes: ```python file=<path in the checkout>, or script=<name> (run once, not kept).
BLOCK = re.compile(r"^```python (file|script)=(\S+)\n(.*?)^```$", re.M | re.S)
HAN = re.compile(r"[\u4e00-\u9fff]")
ROW = re.compile(r"^\| `([^`]+)` \| [^|]+ \| (\d+) \|$", re.M)


def page() -> str:
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def blocks() -> dict[str, tuple[str, str]]:
    """path -> (kind, text) of every block the recipe writes, in the page's order."""
    return {path: (kind, text) for kind, path, text in BLOCK.findall(page())}


def table() -> dict[str, int]:
    """The page's table of what the example touches: path -> lines."""
    section = page().split("## Adding an exercise", 1)[1].split("### What finds what", 1)[0]
    return {path: int(lines) for path, lines in ROW.findall(section)}


def lines(text: str) -> int:
    return len(text.splitlines())


def claim(pattern: str) -> int:
    """The number the page states where ``pattern`` (one group) matches."""
    found = re.search(pattern, page())
    assert found, f"the page no longer says {pattern!r}"
    return int(found.group(1))


def test_the_pages_table_counts_its_blocks():
    """Each file block's lines, the script's, and the totals are what the page's table and text say;
    every block compiles. (The notebook's row is checked where the script has made it, below.)"""
    written, rows = blocks(), table()
    files = {p: text for p, (kind, text) in written.items() if kind == "file"}
    scripts = [text for kind, text in written.values() if kind == "script"]
    assert len(scripts) == 1 and files, "the page holds one script and the files it writes"
    for path, (_, text) in written.items():
        compile(text, path, "exec")
    assert {p: rows.get(p) for p in files} == {p: lines(t) for p, t in files.items()}
    notebook = os.path.join("source", ASSIGNMENT, NOTEBOOK + ".ipynb")
    assert set(rows) == set(files) | {notebook}, "the table lists the files the blocks write and the notebook"
    assert claim(r"\| \*\*(\d+) files\*\* \|") == len(rows)
    assert claim(r"\| \*\*\d+ files\*\* \| \| \*\*(\d+)\*\* \|") == sum(rows.values())
    assert claim(r"from a (\d+)-line script") == lines(scripts[0])
    assert f"`{GRADE_ID}(xs, workers)`" in page()


def test_the_pages_grader_and_self_check_keep_the_kit_conventions(capsys):
    """In this process, at no grading's cost: the grader's points add up to the test cell's, every
    sentence of its table and of the self-check's is in Chinese and English, and the self-check
    passes the right answer and flags the wrong ones, in each language."""
    source_ch13lib()
    from ch13lib import lang

    written = {p: text for p, (_, text) in blocks().items()}
    script = next(text for kind, text in blocks().values() if kind == "script")
    points = int(re.search(rf'hidden_tests\("{GRADE_ID}", (\d+)\)', script).group(1))
    grader = {}
    exec(compile(written[f"graders/{GRADE_ID}.py"], f"{GRADE_ID}.py", "exec"), grader)
    assert grader["grader"].grade_id == GRADE_ID and grader["grader"].max_points == points
    check = {"__name__": "parallel_sum_checks"}
    exec(compile(written["source/ch13_04/ch13lib/parallel_sum_checks.py"], "parallel_sum_checks.py", "exec"), check)
    tables = [v for ns in (grader, check) for v in ns.values() if isinstance(v, lang.Messages)]
    assert grader["M"] in tables and check["M"] in tables
    for table in tables:
        for key, (zh, en) in table.texts.items():
            assert HAN.search(zh) and not HAN.search(en) and re.search(r"[A-Za-z]{2}", en), key
    folder = f"graders/catalogue/{GRADE_ID}/"
    answers = {p[len(folder) : -3]: text for p, text in written.items() if p.startswith(folder)}
    assert {n.split("_")[0] for n in answers} == {"right", "wrong"}
    try:
        for language in ("zh", "en"):
            lang.use(language)
            for name, source in answers.items():
                cell = {}
                exec(compile(source, name, "exec"), cell)
                ok = check["check_parallel_sum"](cell["parallel_sum"])
                shown = capsys.readouterr().out
                assert ok is name.startswith("right_") and ("✘" in shown) is (not ok), (language, name, shown)
                assert bool(HAN.search(shown)) is (language == "zh"), (language, name, shown)
    finally:
        lang.use(None)


def _framework_only(grade_ids: set[str]):
    """copytree's ignore for the checkout's graders/: its own modules, no exercise, no plans, no secret."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {"__pycache__", "catalogue", "plans.json"} | {f"{g}.py" for g in grade_ids}
        return {n for n in names if n in skip or n.startswith(".secret")}

    return ignore


def course_with_the_example(root: str) -> str:
    """A temporary course: the kit's code (kit/, graders/'s own modules, ch13lib beside no notebook,
    nbgrader_config.py) and the page's files. Returns where the page's script was written."""
    from graders import grade_ids

    plain = shutil.ignore_patterns("__pycache__", "*.pyc", "*.ipynb", ".ipynb_checkpoints")
    shutil.copytree(os.path.join(ROOT, "kit"), os.path.join(root, "kit"), ignore=plain)
    shutil.copytree(
        os.path.join(ROOT, "graders"), os.path.join(root, "graders"), ignore=_framework_only(set(grade_ids()))
    )
    source = os.path.join("source", ASSIGNMENT)
    shutil.copytree(os.path.join(ROOT, source), os.path.join(root, source), ignore=plain)
    shutil.copy(os.path.join(ROOT, "nbgrader_config.py"), root)
    script = ""
    for path, (kind, text) in blocks().items():
        target = os.path.join(root, path) if kind == "file" else os.path.join(os.path.dirname(root), path)
        assert kind == "script" or not os.path.exists(target), f"{path} is the kit's own file"
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
        script = target if kind == "script" else script
    return script


def catalogue_of(root: str):
    """The copy's graders/_catalogue.py (it reads the copy's catalogue folder), as a module of its own."""
    spec = importlib.util.spec_from_file_location("example_catalogue", os.path.join(root, "graders", "_catalogue.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # where its dataclass looks itself up while it is made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def self_check_output(course: Course, student: str) -> str:
    nb = nbformat.read(course.path("autograded", student, ASSIGNMENT, NOTEBOOK + ".ipynb"), as_version=4)
    return "".join(
        o.get("text", "") for c in nb.cells if "check_parallel_sum(" in c.source for o in c.get("outputs", [])
    )


@pytest.mark.slow
@pytest.mark.deep  # about 40 s on 2 shared cores: a release and two students through nbgrader autograde
def test_the_worked_example_is_graded_as_the_page_says(tmp_path):
    """The page's files in a temporary course, its script run, `make release`'s command, a right and
    a wrong catalogue answer submitted and graded by the plain `nbgrader autograde`: the right one
    gets full marks, the wrong one loses exactly the points of the tests its `# fails:` names, with
    its `# message:` lines in the feedback, and the notebook's self-check says ✔ and ✘ alike."""
    root = str(tmp_path / "course")
    script = course_with_the_example(root)
    env = {**nbgrader_env(), "PYTHONPATH": root}

    def run(*args: str, timeout: float = 300) -> None:
        proc = subprocess.run(
            [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout
        )
        assert proc.returncode == 0, f"{args}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"

    run(script)  # step 1: the notebook's cells
    run("-m", "kit.release")  # what `make release` runs
    course = Course(root)

    nb = nbformat.read(os.path.join(root, "source", ASSIGNMENT, NOTEBOOK + ".ipynb"), as_version=4)
    assert list(answer_cells(nb)) == list(hidden_test_cells(nb)) == [GRADE_ID]
    notebook = os.path.join("source", ASSIGNMENT, NOTEBOOK + ".ipynb")
    assert table()[notebook] == sum(lines(c.source) for c in nb.cells), "the table's notebook row"
    assert claim(rf"`{re.escape(notebook)}` \| (\d+) cells") == len(nb.cells)
    with open(os.path.join(root, "graders", "plans.json"), encoding="utf-8") as f:
        plans = json.load(f)
    assert list(plans) == [GRADE_ID] and plans[GRADE_ID]["harness"] == []
    entry = json.dumps(plans, indent=1, sort_keys=True).splitlines()[1:-1]
    assert claim(r"`graders/plans.json` \((\d+) lines\)") == len(entry)
    made = [
        os.path.join(folder, ASSIGNMENT, name)
        for folder in ("release", "solutions")
        for name in (NOTEBOOK + ".ipynb", os.path.join("ch13lib", "parallel_sum_checks.py"))
    ]
    assert all(os.path.isfile(os.path.join(root, p)) for p in made), made
    assert claim(r"writes (\d+) more files") == len(made) + 1  # and graders/plans.json
    released = {f for _, _, files in os.walk(os.path.join(root, "release")) for f in files}
    assert f"{GRADE_ID}.py" not in released and not any(f.startswith(("right_", "wrong_")) for f in released)

    catalogue = catalogue_of(root)
    right, wrong = catalogue.entry(GRADE_ID, "right_threads"), catalogue.entry(GRADE_ID, "wrong_drops_tail")
    for student, e in (("right", right), ("wrong", wrong)):
        course.submit(student, course.submission_from_answers({GRADE_ID: e.source}))
    run("-m", "nbgrader", "autograde", ASSIGNMENT, "--force", timeout=600)

    got = course.scores("right")[GRADE_ID]
    assert got.score == got.max_score == 4, got.report
    assert "[FAIL]" not in got.report, got.report
    got = course.scores("wrong")[GRADE_ID]
    failed = sorted(re.findall(r"^\[FAIL\] (\w+) ", got.report, re.M))
    assert tuple(failed) == wrong.fails, got.report
    assert got.score == 4 - 3, got.report  # sums_every_element (2) and more_workers_than_elements (1)
    for message in wrong.messages:
        assert message in got.report, f"{message!r} not in:\n{got.report}"

    shown = self_check_output(course, "right")
    assert "✔" in shown and "✘" not in shown, shown
    shown = self_check_output(course, "wrong")
    assert "✘ parallel_sum([5], 4) = 0" in shown, shown
