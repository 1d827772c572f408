"""Check a student's submitted notebooks before nbgrader sees them, and say what is wrong in words.

nbgrader fails a student's whole submission when one notebook is not valid JSON; the class runner
uses this to grade the readable notebooks one by one and flag the rest with a reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Literal

import nbformat

from kit import ASSIGNMENT
from kit.answers import answer_cells, nbgrader_meta

Kind = Literal["not_submitted", "unreadable", "invalid", "duplicated_cells", "cells_missing", "kernel_replaced"]
UNGRADABLE: frozenset[Kind] = frozenset({"unreadable", "invalid"})  # nbgrader cannot read the notebook


@dataclasses.dataclass(frozen=True)
class Problem:
    """One problem with one submitted notebook: callers branch on ``kind``; ``message`` is what
    the TA reads (it names the notebook first)."""

    notebook: str  # the file name, e.g. 06_quiz.ipynb
    kind: Kind
    message: str

    def __str__(self) -> str:
        return self.message


def check_notebook(path: str, release_nb) -> list[Problem]:
    """Problems with one submitted notebook ([] when it can be graded as it is)."""
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [Problem(name, "unreadable", f"{name}: not a readable notebook (invalid JSON: {str(e)[:80]}); scored 0")]
    try:
        nb = nbformat.from_dict(raw)
        nbformat.validate(nb)
    except Exception as e:  # nbformat raises several types for a malformed notebook
        return [Problem(name, "invalid", f"{name}: not a valid notebook ({str(e).splitlines()[0][:80]}); scored 0")]
    problems = []
    ids = [nbgrader_meta(c).get("grade_id") for c in nb.cells if nbgrader_meta(c).get("grade_id")]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(
            Problem(
                name, "duplicated_cells", f"{name}: duplicated cells {', '.join(dupes)} (the first of each is graded)"
            )
        )
    missing = sorted(set(answer_cells(release_nb)) - set(answer_cells(nb)))
    if missing:
        problems.append(
            Problem(name, "cells_missing", f"{name}: answer cell(s) {', '.join(missing)} deleted or renamed (scored 0)")
        )
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    if kernel and kernel != release_nb.metadata.get("kernelspec", {}).get("name"):
        problems.append(
            Problem(name, "kernel_replaced", f"{name}: kernel '{kernel}' replaced by the course's Python kernel")
        )
    return problems


def check_submission(folder: str, release_folder: str) -> tuple[dict[str, list[Problem]], list[str]]:
    """(problems per notebook name, names of notebooks nbgrader can read) for one student."""
    problems: dict[str, list[Problem]] = {}
    readable = []
    for entry in sorted(os.listdir(release_folder)):
        if not entry.endswith(".ipynb"):
            continue
        name = entry[:-6]
        path = os.path.join(folder, entry)
        if not os.path.exists(path):
            problems[name] = [Problem(entry, "not_submitted", f"{entry}: not submitted; scored 0")]
            continue
        release_nb = nbformat.read(os.path.join(release_folder, entry), as_version=4)
        found = check_notebook(path, release_nb)
        if found:
            problems[name] = found
        if not any(p.kind in UNGRADABLE for p in found):
            readable.append(name)
    return problems, readable


def release_folder(course_root: str) -> str:
    return os.path.join(course_root, "release", ASSIGNMENT)
