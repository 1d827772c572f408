"""The preflight (kit/preflight.py) says what is wrong with a submission as a kind, which the class
runner branches on, and in the words the TA reads. Fast: no nbgrader run."""

from __future__ import annotations

import json
import os
import shutil

import nbformat

from kit import ROOT, classrun
from kit.answers import answer_cells
from kit.preflight import check_submission

RELEASE = os.path.join(ROOT, "release", "ch13_04")


def _submission(folder) -> None:
    """Every release notebook but 05, with one problem of each kind."""
    for name in sorted(os.listdir(RELEASE)):
        if name.endswith(".ipynb") and not name.startswith("05_"):
            shutil.copy(os.path.join(RELEASE, name), folder / name)
    (folder / "03_collectives.ipynb").write_text('{"cells": [', encoding="utf-8")  # a truncated upload
    (folder / "04_mapreduce.ipynb").write_text('{"not": "a notebook"}', encoding="utf-8")
    quiz = nbformat.read(str(folder / "06_quiz.ipynb"), as_version=4)
    quiz.cells.remove(answer_cells(quiz)["amdahl"])
    quiz.metadata.kernelspec.name = "julia"
    nbformat.write(quiz, str(folder / "06_quiz.ipynb"))
    sync = nbformat.read(str(folder / "01_sync_primitives.ipynb"), as_version=4)
    twin = answer_cells(sync)["counter"].copy()
    twin.id = "twin"
    sync.cells.append(twin)
    nbformat.write(sync, str(folder / "01_sync_primitives.ipynb"))


def test_each_problem_has_a_kind_and_its_words(tmp_path):
    _submission(tmp_path)
    problems, readable = check_submission(str(tmp_path), RELEASE)
    kinds = {name: [p.kind for p in ps] for name, ps in problems.items()}
    assert kinds == {
        "01_sync_primitives": ["duplicated_cells"],
        "03_collectives": ["unreadable"],
        "04_mapreduce": ["invalid"],
        "05_fsdp_checkpoint": ["not_submitted"],
        "06_quiz": ["cells_missing", "kernel_replaced"],
    }
    assert readable == ["01_sync_primitives", "02_cuda_kernels", "06_quiz", "07_parallelism"]
    words = {name: [str(p) for p in ps] for name, ps in problems.items()}
    assert words["01_sync_primitives"] == [
        "01_sync_primitives.ipynb: duplicated cells counter (the first of each is graded)"
    ]
    assert words["03_collectives"][0].startswith("03_collectives.ipynb: not a readable notebook (invalid JSON: ")
    assert words["03_collectives"][0].endswith("); scored 0")
    assert words["04_mapreduce"][0].startswith("04_mapreduce.ipynb: not a valid notebook (")
    assert words["05_fsdp_checkpoint"] == ["05_fsdp_checkpoint.ipynb: not submitted; scored 0"]
    assert words["06_quiz"] == [
        "06_quiz.ipynb: answer cell(s) amdahl deleted or renamed (scored 0)",
        "06_quiz.ipynb: kernel 'julia' replaced by the course's Python kernel",
    ]
    assert all(p.notebook == name + ".ipynb" for name, ps in problems.items() for p in ps)


def test_the_class_runner_grades_readable_notebooks_one_by_one(tmp_path, monkeypatch):
    """An unreadable notebook (by kind, whatever its error's words say) sends the runner notebook by
    notebook; a notebook that is only missing does not."""

    class Course:
        root = str(tmp_path)

        def path(self, *parts):
            return str(tmp_path.joinpath(*parts))

    (tmp_path / "release").mkdir()
    os.symlink(RELEASE, tmp_path / "release" / "ch13_04")
    _submission(_mk(tmp_path / "submitted" / "s1"))
    s2 = _mk(tmp_path / "submitted" / "s2")
    shutil.copy(os.path.join(RELEASE, "06_quiz.ipynb"), s2 / "06_quiz.ipynb")  # the rest not submitted
    # an invalid notebook whose error happens to say "not submitted" (the old test read the words)
    invalid = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [], "not submitted": 1}
    (s2 / "02_cuda_kernels.ipynb").write_text(json.dumps(invalid), encoding="utf-8")
    calls = []
    monkeypatch.setattr(classrun, "_autograde", lambda c, s, nb, t, run: (calls.append((s, nb)), (True, ""))[1])
    runs = {s: classrun.grade_student(Course(), s, force=True) for s in ("s1", "s2")}
    assert calls == [
        ("s1", "01_sync_primitives"),
        ("s1", "02_cuda_kernels"),
        ("s1", "06_quiz"),
        ("s1", "07_parallelism"),
        ("s2", "06_quiz"),
    ]
    assert "05_fsdp_checkpoint.ipynb: not submitted; scored 0" in runs["s1"].problems
    assert all(isinstance(p, str) for p in runs["s1"].problems)
    invalid_words = [p for p in runs["s2"].problems if p.startswith("02_cuda_kernels.ipynb: not a valid notebook")]
    assert len(invalid_words) == 1 and "not submitted" in invalid_words[0]


def _mk(student_folder):
    folder = student_folder / "ch13_04"
    folder.mkdir(parents=True)
    return folder
