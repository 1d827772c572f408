"""Notebook 01's published allow-list (ch13lib/allowed.py): every honest answer stays inside it, each
spelling outside it is refused with its reason, and the judge and the self-check both say so."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import textwrap

import pytest

import graders  # noqa: F401 - first: it puts source/ch13_04 on sys.path (ch13lib is not installed)
from ch13lib import allowed, lang, sync_checks
from graders import _catalogue
from kit import ASSIGNMENT, ROOT
from kit.grading import grade_cell

THREADS = sorted(allowed.EXERCISES)


@pytest.fixture(autouse=True)
def english():
    lang.use("en")
    yield
    lang.use(None)


@pytest.mark.parametrize("grade_id", THREADS)
def test_every_catalogue_answer_stays_inside_its_list(grade_id):
    """Right answers written every way the catalogue knows, and wrong ones (they must fail for their
    own mistake, not for a refusal), use only what the list names."""
    entries = _catalogue.entries(grade_id)
    assert len(entries) >= 5
    for e in entries:
        assert allowed.outside(grade_id, e.source) == [], e.name


HONEST = {
    "aliases and submodules": """
        import threading as th
        import concurrent.futures
        from concurrent import futures
        from collections import deque
        lock = th.Lock()
        pool = concurrent.futures.ThreadPoolExecutor(2)
        done = futures.wait([])
        """,
    "own reflection": """
        class C:
            FIELDS = ("_n",)
            def __init__(self):
                super().__init__()
                for name in self.FIELDS:
                    setattr(self, name, 0)
            def __repr__(self):
                return f"C({vars(self)['_n']}, {type(self).__name__})"
            def bump(self):
                name = self.FIELDS[0]
                setattr(self, name, getattr(self, name) + 1)
        """,
    "a listed built-in's name, bound again, is the cell's own": """
        def print(*parts):
            return parts
        id = 3
        print(id, max([1]))
        """,
    "format with plain fields": """
        msg = "{} of {n}: {0!r:>4}".format(1, 2, n=3)
        """,
    "a name nothing binds (a NameError at run time)": """
        def f():
            return undefined_thing
        """,
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_idioms_stay_legal(name):
    assert allowed.outside("counter", textwrap.dedent(HONEST[name])) == []


OUTSIDE = {
    "import sys": "imports sys",
    "import weakref": "imports weakref",
    "from os import path": "imports os",
    "from threading import settrace": "uses threading.settrace",
    "import threading\nthreading.settrace(print)": "uses threading.settrace",
    "import threading\nt = threading": "uses the module threading as a value",
    "import threading\ngetattr(threading, 'Lock')": "uses the module threading as a value",
    "from concurrent.futures.thread import _worker": "imports concurrent.futures.thread",
    "import concurrent.futures\nconcurrent.futures.thread": "uses concurrent.futures.thread",
    "from threading import *": "import *",
    "from . import x": "relative import",
    "eval('1')": "uses the built-in eval",
    "__import__('os')": "uses the built-in __import__",
    "__builtins__": "uses the built-in __builtins__",
    "f = setattr": "passes setattr around as a value",
    "list(map(setattr, [o], ['n'], [1]))": "passes setattr around as a value",
    "vars(obj)": "vars(...) is for your own object only",
    "getattr(obj, name)": "computed attribute name",
    "setattr(obj, '_' + 'n', 1)": "computed attribute name",
    "getattr(obj, '__globals__')": "reaches for the attribute __globals__",
    "obj.__dict__": "reaches for the attribute __dict__",
    "f.__code__": "reaches for the attribute __code__",
    "C = type('C', (), {})": "type(...) with three arguments",
    "'{0.__class__}'.format(obj)": "the format string's field {0.__class__}",
    "'{0[1]}'.format(obj)": "the format string's field {0[1]}",
    "template.format(obj)": "calls .format() on a computed string",
    "def f(getattr):\n    return getattr\nlook = getattr": "binds the name of the built-in getattr",
    "def g():\n    global open\n    open = print": "binds the name of the built-in open",
    "for eval in (print,):\n    pass": "binds the name of the built-in eval",
}


@pytest.mark.parametrize("spelling", sorted(OUTSIDE))
def test_what_the_list_does_not_name_is_refused_with_its_reason(spelling):
    found = allowed.outside("counter", spelling + "\n")
    assert found and OUTSIDE[spelling] in found[0], found
    assert found[0].startswith("line ")


def test_an_exercise_without_a_list_and_a_cell_that_does_not_parse_are_left_to_the_grading():
    assert allowed.outside("amdahl", "import sys\n") == []
    assert allowed.outside("counter", "def (:\n") == []


def test_each_finding_is_said_in_both_languages():
    lang.use("both")
    (line,) = allowed.outside("counter", "import sys\n")
    assert "导入了 sys" in line and "imports sys" in line


def _self_check_output(tmp_path, source: str) -> tuple[bool, str]:
    """Run notebook 01's counter self-check on ``source`` as if its cell had just run."""
    cell = tmp_path / "cell.py"
    cell.write_text(source)
    spec = importlib.util.spec_from_file_location("cell_under_check", cell)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = sync_checks.check_counter(module.SafeCounter)
    return ok, out.getvalue()


OUTSIDE_COUNTER = _catalogue.source("counter", "right_reference").replace(
    "import threading", "import threading\nimport weakref"
)


def test_the_self_check_tells_the_student_before_submitting(tmp_path):
    ok, said = _self_check_output(tmp_path, OUTSIDE_COUNTER)
    assert not ok
    assert "allow-list" in said and "imports weakref" in said, said
    assert "✔" not in said  # no scenario ran: the grading would not have run any either


@pytest.mark.slow
def test_the_judge_refuses_a_cell_outside_its_list_before_any_subject_starts():
    """The refusal reaches the verdict as data (the TA's report), every test at 0, and the same
    answer inside the list gets full marks."""
    refused = grade_cell("counter", OUTSIDE_COUNTER, sandbox=False)
    assert refused.tampered and refused.score == 0 and refused.max_score > 0
    assert any("imports weakref" in line for line in refused.refused), refused.refused
    assert all("allow-list" in r.message for r in refused.results)


def test_the_notebook_names_the_modules_its_list_allows():
    """Notebook 01's intro tells the student the list's modules, in both languages: the two stay in step."""
    with open(os.path.join(ROOT, "source", ASSIGNMENT, "01_sync_primitives.ipynb"), encoding="utf-8") as f:
        intro = "".join(json.load(f)["cells"][0]["source"])
    zh, en = intro.split("Your answer cells use only")
    for module in allowed.THREADS.modules:
        if module != "__future__" and module != "collections.abc":
            assert f"`{module}`" in zh and f"`{module}`" in en, module
    assert "ch13lib/allowed.py" in zh and "ch13lib/allowed.py" in en
