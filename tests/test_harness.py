"""The harness interface (kit/harness.py): every harness a grader names keeps it, and a module that
does not is refused before any student code runs."""

from __future__ import annotations

import importlib
import types

import numpy as np
import pytest

import graders
from kit import harness, source_ch13lib

source_ch13lib()


def _named_harnesses() -> list[str]:
    return sorted({name for gid in graders.grade_ids() for name in graders.load_grader(gid).harness})


@pytest.mark.parametrize("name", _named_harnesses())
def test_every_harness_a_grader_names_keeps_the_interface(name):
    module = importlib.import_module(name)
    harness.check(module)
    points = harness.entry_points(module, "SUBJECT_API")
    assert all(key.startswith(name + ":") and callable(fn) for key, fn in points.items())


def _module(**attrs) -> types.ModuleType:
    module = types.ModuleType("ch13lib.fake_harness")

    def observe(cell):
        return cell

    observe.__module__ = module.__name__
    vars(module).update(observe=observe, **attrs)
    return module


@pytest.mark.parametrize(
    "attrs,why",
    [
        ({"SUBJECT_API": ["observe"]}, "not a tuple of names"),
        ({"SUBJECT_API": ("missing",)}, "which is not a function of ch13lib"),
        ({"RANK_API": ("sum",), "sum": np.sum}, "which is not a function of ch13lib"),
        ({"CHILD_API": ("kind",), "kind": type("Kind", (), {})}, "which is not a function of ch13lib"),
        ({"subject_setup": lambda: None}, "must take one argument"),
        ({"subject_setup": print}, "is not a function"),
    ],
    ids=["list", "missing", "library_function", "class", "setup_without_argument", "setup_builtin"],
)
def test_a_module_that_breaks_the_interface_is_refused(attrs, why):
    with pytest.raises(harness.HarnessError, match=why):
        harness.check(_module(**attrs))


def test_a_module_that_keeps_it_is_accepted():
    module = _module(SUBJECT_API=("observe",), subject_setup=lambda trusted: None)
    harness.check(module)
    assert list(harness.entry_points(module, "SUBJECT_API")) == ["ch13lib.fake_harness:observe"]
    with pytest.raises(ValueError):
        harness.entry_points(module, "OTHER_API")


def _child(call: str, partition: str):
    """A guarded child (kit.subject.CHILD_ENTRY) asked to run ``call`` on a cell with ``partition``."""
    import json
    import os
    import subprocess
    import sys

    from kit.subject import CHILD_ENTRY

    request = json.dumps({"grade_id": "word_count", "call": call, "args": [["a"], [2]]})
    return subprocess.run(
        [sys.executable, "-c", CHILD_ENTRY, "CH13_JOB=", request],
        input=f"def partition(key, n):\n    return {partition}\n",
        capture_output=True,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        timeout=120,
    )


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ("os:system", "not a harness module"),  # outside the harness's packages
        ("kitten.harnesses.mapreduce:partition_rows", "not a harness module"),  # a prefix is not a package
        ("kit.subject:child", "not a harness module"),  # of the kit, but not of its harnesses
        ("ch13lib.mapreduce:start_local_ray", "not in ch13lib.mapreduce.CHILD_API"),  # listed nowhere
        ("kit.harnesses.mapreduce:CHILD_API", "not in kit.harnesses.mapreduce.CHILD_API"),
    ],
)
def test_the_guarded_child_runs_only_a_child_api_entry_of_the_harness_packages(call, why):
    """kit.subject.child fails closed: a module outside ch13lib and kit.harnesses, or a name its
    module's CHILD_API does not list, is refused before the cell is read."""
    run = _child(call, "0")
    assert run.returncode != 0 and "PermissionError" in run.stderr and why in run.stderr, run.stderr[-2000:]


def test_the_guarded_child_runs_a_child_api_entry_of_kit_harnesses():
    import json

    run = _child("kit.harnesses.mapreduce:partition_rows", "1")
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1])["ok"] == [[1]]


def test_the_subject_hands_over_only_the_rank_api_of_its_harness_packages():
    """``Trusted.ranks`` (what a guarded rank may run): the RANK_API entries of the subject's harness
    modules of ch13lib, kit.harnesses or gpu, by ``module:function``; a module elsewhere lists none."""
    import kit.harnesses.collective_cases as cc
    import kit.harnesses.parallel_sim as ps
    from kit.subject import rank_entries, trusted

    def sum_all(payload):
        return payload

    elsewhere = _module(RANK_API=("sum_all",), sum_all=sum_all)
    elsewhere.__name__ = "mylib.ranks"
    got = rank_entries([cc, ps, elsewhere])
    assert got == {
        "kit.harnesses.collective_cases:run_real_cases": cc.run_real_cases,
        "kit.harnesses.parallel_sim:run_real": ps.run_real,
    }
    handed = trusted(got).ranks
    assert type(handed) is tuple and dict(handed) == got
    assert trusted().ranks == ()
