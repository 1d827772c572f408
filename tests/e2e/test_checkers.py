"""The browser tests' judgements, on made-up pages (fast, no browser): each one can fail."""

from __future__ import annotations

from kit.cells import answer, code, hidden_tests, markdown, notebook

from .lab import errors_of
from .test_student_notebooks import solved_problems, stub_problems
from .test_ta_side import hidden_code_in, hidden_test_lines

NB = notebook(
    [markdown("# x"), answer("quiz", "q1 = 1"), code("check(q1)"), hidden_tests("quiz", 10), code("print('after')")]
)
TRACE = (
    "---------------------------------------------------------------------------\n"
    "{name}                       Traceback (most recent call last)\nCell In[1], line 2\n"
)


def page(answer_text="", check_text="", after_text=""):
    return [
        {"kind": "markdown", "prompt": "", "text": ""},
        {"kind": "code", "prompt": "[1]:", "text": answer_text},
        {"kind": "code", "prompt": "[2]:", "text": check_text},
        {"kind": "code", "prompt": "[3]:", "text": ""},
        {"kind": "code", "prompt": "[4]:", "text": after_text},
    ]


def test_errors_are_read_from_tracebacks():
    assert errors_of(TRACE.format(name="NotImplementedError")) == ["NotImplementedError"]
    assert errors_of("✘ not implemented yet") == []


def test_a_stub_that_says_not_done_is_fine():
    assert stub_problems(page(TRACE.format(name="NotImplementedError"), "✘ q1: not implemented yet"), NB) == []


def test_stub_checks_can_fail():
    assert any("does not say it is not done" in p for p in stub_problems(page("", "✘ q1: wrong"), NB))
    assert any("no self-check output" in p for p in stub_problems(page("", ""), NB))
    assert any("passing something" in p for p in stub_problems(page("", "✔ q1 / not implemented"), NB))
    assert any(
        "raised ModuleNotFoundError" in p
        for p in stub_problems(page("", "not implemented", TRACE.format(name="ModuleNotFoundError")), NB)
    )


def test_solved_checks_can_fail():
    assert solved_problems(page("", "✔ q1: right"), NB) == []
    assert any("no ✔" in p for p in solved_problems(page("", "q1 done"), NB))
    assert any("fails the reference" in p for p in solved_problems(page("", "✔ a\n✘ b"), NB))
    assert any("raised ValueError" in p for p in solved_problems(page(TRACE.format(name="ValueError"), "✔"), NB))


def test_the_leak_check_finds_hidden_code():
    lines = hidden_test_lines("amdahl")
    assert len(lines) >= 2
    report = "amdahl: 3 / 5 points\n[FAIL] matches_the_formula (0/2)\n  smallest failing input:\n    p=0.5\n"
    assert hidden_code_in(report) == {}
    leaked = hidden_code_in(report + "\n    " + lines[0] + "\n        " + lines[1] + "\n")
    assert "amdahl" in leaked
