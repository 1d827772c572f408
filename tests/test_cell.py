"""ch13lib/cell.py, the one home of a student's answer cell: its naming, loading, tracebacks and
required names, as the judge and the subject side both use them."""

from __future__ import annotations

import ast
import os
import sys
import traceback

import pytest

import graders  # noqa: F401 - puts source/ch13_04 on sys.path (ch13lib is not part of the installed kit)
from ch13lib import cell, lang

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOURCE = "def f(x):\n    return 1 / x\n\nclass C:\n    pass\n\nN = 3\n"


def test_naming_and_is_cell():
    assert cell.filename("counter") == "<answer cell counter>"
    assert cell.module_name("counter") == "answer_counter" and cell.module_name("counter", 2) == "answer_counter_2"
    m = cell.load(SOURCE, "counter", "t1", register=False)
    assert cell.is_cell(m.f) and cell.is_cell(m.f.__code__) and cell.is_cell("<answer cell x>")
    assert not cell.is_cell(cell.load) and not cell.is_cell("<your cell>") and not cell.is_cell(None)
    assert m.C.__module__.startswith(cell.MODULE_PREFIX) and m.__file__ == "<answer cell counter>"


def test_a_self_checks_copy_is_named_apart_from_the_graded_cell():
    assert cell.self_check_filename() == "<your cell>" and cell.self_check_filename("s1") == "<your cell s1>"
    assert cell.is_self_check_copy("<your cell s1>") and not cell.is_self_check_copy("<answer cell counter>")
    assert not cell.is_cell(cell.self_check_filename()) and not cell.is_self_check_copy(None)
    code = cell.compile_cell("x = 1\n", cell.self_check_filename("s1"))  # a pseudo name: accepted
    assert code.co_filename == "<your cell s1>"


def test_each_load_is_a_fresh_registered_module():
    a, b = cell.load(SOURCE, "counter", "a"), cell.load(SOURCE, "counter", "b")
    try:
        assert a is not b and a.C is not b.C
        assert sys.modules["answer_counter_a"] is a and sys.modules["answer_counter_b"] is b
    finally:
        sys.modules.pop("answer_counter_a", None)
        sys.modules.pop("answer_counter_b", None)


def test_only_pseudo_file_names_are_compiled_or_run():
    """Code loaded here is always the student's to the audit hook (kit/audit.py): no file name of a
    library, of the harness or of a frozen module."""
    for name in (os.__file__, cell.__file__, "<frozen os>", "relative.py", 3):
        with pytest.raises(ValueError):
            cell.compile_cell("x = 1", name)
    with pytest.raises(ValueError):
        cell.new_module(compile("x = 1", os.__file__, "exec"), "answer_bad")
    with pytest.raises(ValueError):
        cell.new_module(cell.load.__code__, "answer_bad")


def test_traceback_keeps_the_cells_frames_with_their_lines():
    m = cell.load(SOURCE, "counter", register=False)
    try:
        m.f(0)
    except ZeroDivisionError as e:
        assert cell.traceback_text(e, cell.filename("counter")) == "  line 2, in f: return 1 / x"
        assert cell.traceback_text(e) == "  line 2, in f: return 1 / x"  # any answer cell
        assert cell.traceback_text(e, "<answer cell other>") == "  line 2, in f: return 1 / x"  # the last frame
        assert [f.name for f in cell.cell_frames(e)] == ["f"]
    try:
        int("x")
    except ValueError as e:  # no frame of a cell: the last one
        assert len(cell.cell_frames(e)) == 1 and cell.cell_frames(e)[0] == traceback.extract_tb(e.__traceback__)[-1]


def test_text_of_a_lying_or_raising_str():
    class Bad(Exception):
        def __str__(self):
            raise KeyboardInterrupt

    class Liar:
        def __str__(self):
            return 3

    assert cell.text(Bad()) == "<a Bad whose str() failed>" and cell.text(Liar()) == "<a Liar whose str() failed>"
    assert cell.text("x" * 5000) == "x" * cell.MESSAGE_CAP and cell.text("abc", cap=2) == "ab"


def test_missing_names_from_the_module_or_from_the_subjects_report():
    m = cell.load(SOURCE, "counter", register=False)
    assert cell.missing(["f", "C", "N", "g"], m) == ["N", "g"]
    assert cell.missing(["f", "C", "N", "g"], m, need_callable=False) == ["g"]
    info = {
        "f": {"defined": True, "callable": True},
        "N": {"defined": True, "callable": False},
        "g": {"defined": False},
    }
    assert cell.missing(["f", "N", "g"], info) == ["N", "g"]
    assert cell.missing(["f", "N", "g"], info, need_callable=False) == ["g"]
    lang.use("en")
    assert cell.not_defined("g", "counter") == "`g` is not defined in the counter cell"
    assert (
        cell.not_defined("g", "counter", "`g(x)`")
        == "`g` is not defined in the counter cell (the contract needs `g(x)`)"
    )
    lang.use("zh")
    assert cell.not_defined("g", "counter", "`g(x)`") == "`g` 在 counter 单元中没有定义 (合约要求 `g(x)`)"
    lang.use(None)


def test_the_adapter_imports_nothing_of_the_judge():
    """ch13lib ships to students: the adapter must import without kit or graders."""
    tree = ast.parse(open(cell.__file__, encoding="utf-8").read())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not imported & {"kit", "graders", "gpu", "bench"}, imported
