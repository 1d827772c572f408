"""The TA side in the browser: nbgrader's formgrader in JupyterLab 4 against the kit's course, and the
feedback HTML a student receives after autograde (rendered in Chromium, read as the student reads it)."""

from __future__ import annotations

import inspect
import os
import re

import pytest

from graders import grade_ids, load_grader
from graders._catalogue import entry
from kit import ASSIGNMENT, ROOT

from .conftest import student_env
from .lab import JupyterLab, fresh_dir

FEEDBACK_STUDENT = "e2e_feedback"
# Fast graders with a shrunk counterexample (amdahl: hypothesis) and plain messages (quiz).
WRONG = {"amdahl": "wrong_integer_division.py", "quiz": "wrong_swapped_terms.py"}


@pytest.mark.slow
def test_formgrader_loads_in_jupyterlab_against_the_course(page, course, artifacts, tmp_path):
    folder = fresh_dir(os.path.join(artifacts, "formgrader"))
    env = student_env()
    env["PYTHONPATH"] = ROOT  # nbgrader_config.py imports kit: this checkout's, as kit.course runs nbgrader
    with JupyterLab(course.root, str(tmp_path / "lab"), env=env) as lab:
        try:
            # the server extension, read by the same browser session
            page.goto(lab.url("lab"))
            page.wait_for_selector(".jp-LabShell #jp-main-statusbar", timeout=180_000)
            api = page.request.get(lab.url("formgrader/api/assignments"))
            assert api.ok, f"formgrader API answered {api.status}: {api.text()[:500]}"
            names = [a.get("name") for a in api.json()]
            assert ASSIGNMENT in names, f"formgrader does not list {ASSIGNMENT}: {names}"
            # the lab extension: Nbgrader ▸ Formgrader opens the formgrader in a main-area panel
            page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
            page.locator('.lm-Menu li[data-command="nbgrader:open-formgrader"]').click()
            frame = page.frame_locator("iframe").first
            row = frame.locator("table").get_by_text(ASSIGNMENT, exact=True).first
            row.wait_for(timeout=180_000)
            page.screenshot(path=os.path.join(folder, "manage_assignments.png"))
            text = frame.locator("body").inner_text()
            assert "Manage Assignments" in text, text[:1000]
            assert not re.search(r"Traceback|Internal Server Error|Error loading", text), text[:2000]
        finally:
            with open(os.path.join(folder, "jupyterlab.log"), "w", encoding="utf-8") as f:
                f.write(lab.log())


def hidden_test_lines(gid: str) -> list[str]:
    """Normalised code lines of every hidden test of ``gid`` (long enough to be distinctive)."""
    lines = []
    for t in load_grader(gid).tests:
        for line in inspect.getsource(t.func).splitlines():
            line = " ".join(line.split())
            if len(line) > 12 and not line.startswith(("#", "@", "def ", '"""')):
                lines.append(line)
    return lines


def hidden_code_in(text: str) -> dict[str, list[str]]:
    """grade_id -> pairs of consecutive hidden-test lines found in ``text`` (whitespace normalised)."""
    flat = " ".join(text.split())
    found = {}
    for gid in grade_ids():
        lines = hidden_test_lines(gid)
        leaked = [" ".join(lines[i : i + 2]) for i in range(len(lines) - 1) if " ".join(lines[i : i + 2]) in flat]
        if leaked:
            found[gid] = leaked
    return found


HAN = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_PROSE = re.compile(r"\b(?:the|of|and|with|was|is|should|expected)\b")


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "zh"])
def test_feedback_html_is_readable(language, page, course, artifacts, monkeypatch):
    """The feedback page a student opens, in the language the TA chose (``c.Feedback.language``;
    here ``CH13_LANG``, which nbgrader's process inherits)."""
    monkeypatch.setenv("CH13_LANG", language)
    folder = fresh_dir(os.path.join(artifacts, f"feedback_{language}"))
    answers = {}
    for gid, name in WRONG.items():
        answers[gid] = entry(gid, name).source
    submission = course.submission_from_answers(answers)
    assert list(submission) == ["06_quiz"], f"quiz and amdahl are expected in 06_quiz: {list(submission)}"
    course.submit(FEEDBACK_STUDENT, submission)
    done = course.autograde(FEEDBACK_STUDENT, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    fb = course.nbgrader(
        "generate_feedback", ASSIGNMENT, f"--student={FEEDBACK_STUDENT}", "--force", check=False, timeout=600
    )
    assert fb.returncode == 0, fb.stdout[-3000:] + fb.stderr[-3000:]
    html = course.path("feedback", FEEDBACK_STUDENT, ASSIGNMENT, "06_quiz.html")
    assert os.path.isfile(html), f"no feedback at {html}"

    page.goto("file://" + html)
    page.wait_for_selector("body")
    page.screenshot(path=os.path.join(folder, "06_quiz.png"), full_page=True)
    text = page.locator("body").inner_text()
    with open(os.path.join(folder, "06_quiz.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    where = f"(screenshot and text: {folder})"
    if language == "zh":
        assert not (problems := zh_problems(text)), f"feedback in zh {where}:\n" + "\n".join(problems)
        return
    problems = []
    for gid, name in WRONG.items():
        m = re.search(rf"{gid}: ([\d.]+) / ([\d.]+) (?:分 / )?points", text)  # in the course's language
        if not m:
            problems.append(f"{gid}: no score line '{gid}: x / y points'")
        elif float(m.group(1)) >= float(m.group(2)):
            problems.append(f"{gid}: the wrong answer {name} got full marks in the feedback")
        for msg in entry(gid, name).messages:
            if msg.lower() not in text.lower():
                problems.append(f"{gid}: the feedback lacks the per-test message {msg!r}")
    if not re.search(r"\[FAIL\] \S+ \(\d", text) or not re.search(r"\[PASS\] \S+ \(\d", text):
        problems.append("the feedback does not list tests one by one as [PASS]/[FAIL] name (points)")
    m = re.search(r"smallest failing input:\n(.+)", text)
    if not m or not m.group(1).strip():
        problems.append("no smallest failing input for the hypothesis-graded amdahl")
    # The report must be visible as text on the page, not only present in the file.
    if not page.get_by_text("smallest failing input:").first.is_visible():
        problems.append("the smallest failing input is not visible on the rendered page")
    for gid, leaked in hidden_code_in(text).items():
        problems.append(f"hidden test code of {gid} in the feedback: {leaked[:2]}")
    for marker in ("BEGIN HIDDEN TESTS", "graders/", "from graders", "Traceback (most recent call last)"):
        if marker in text:
            problems.append(f"the feedback shows {marker!r}")
    assert not problems, f"feedback {where}:\n" + "\n".join(problems)


def zh_problems(text: str) -> list[str]:
    """What a student who reads only Chinese cannot read on a zh feedback page: each test's report
    (the score line, every message line) in Chinese, English prose nowhere in it."""
    problems = []
    for gid in WRONG:
        m = re.search(rf"^{gid}: [\d.]+ / [\d.]+ 分$", text, re.M)
        if not m:
            problems.append(f"{gid}: no score line '{gid}: x / y 分'")
            continue
        lines = text[m.end() :].lstrip("\n").splitlines()
        ends = next((i for i, x in enumerate(lines) if not x.startswith(("[", " "))), len(lines))
        report = "\n".join(lines[:ends])  # its tests, each with its message lines indented below
        if "[FAIL]" not in report:
            problems.append(f"{gid}: no [FAIL] test in its report:\n{report[:800]}")
        for line in report.splitlines():
            body = line.strip()
            if body.startswith(("[PASS]", "[FAIL]")) or not re.search(r"[A-Za-z]{3}", body):
                continue  # a test's name and points; a figure
            if ENGLISH_PROSE.search(body) or not HAN.search(body):
                problems.append(f"{gid}: a line not in Chinese: {body!r}")
    return problems
