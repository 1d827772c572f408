"""The catalogue: right and wrong answers to every answer cell, each with the verdict it must get.

``graders/catalogue/<grade_id>/{right,wrong}_<name>.py`` is the source of a whole answer cell,
written the way students write it, under a header of comment lines::

    # verdict: pass|fail
    # message: <text the feedback must contain>   (one or more for a wrong answer)
    # why: <what this answer does>
    # fails: <test> [<test> ...]                  (optional: exactly these tests fail, the others pass)
    # sample: <test>                              (optional: see below)

``make test`` grades a sample: for every failure class (the wrong answers whose first failing test
is the same) the one wrong answer whose ``# sample:`` names that test; each grade_id's reference
gets its marks there through the solutions notebooks' nbgrader run. ``make test-deep`` grades every
entry and checks that every class has its sample.

It lives beside the graders and is hidden like them (never released, covered in the sandbox):
its right answers are solutions. The kit's tests grade every entry; the self-check measure
(kit.selfchecks), the demo class, the benchmarks and the GPU runner take answers from it.
This module (private: not a grader) is the one place that knows the folder and the header.
"""

from __future__ import annotations

import dataclasses
import glob
import os

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalogue")


@dataclasses.dataclass(frozen=True)
class Entry:
    grade_id: str
    name: str  # the file name without .py: right_<...> or wrong_<...>
    path: str
    source: str
    verdict: str  # "pass" or "fail"
    messages: list[str]
    fails: tuple[str, ...] | None = None  # exactly the tests that fail, where the header pins them
    sample: str | None = None  # the first failing test of the class this answer stands for in `make test`

    @property
    def right(self) -> bool:
        return self.verdict == "pass"


def path(grade_id: str, name: str) -> str:
    return os.path.join(DIR, grade_id, name.removesuffix(".py") + ".py")


def _read(file: str) -> Entry:
    with open(file, encoding="utf-8") as f:
        source = f.read()
    header = {"verdict": [], "message": [], "why": [], "fails": [], "sample": []}
    for line in source.splitlines():
        if not line.startswith("#"):
            break  # the header ends at the first line of code
        key, sep, value = line[1:].strip().partition(":")
        if sep and key in header:
            header[key].append(value.strip())
    name = os.path.basename(file)[:-3]
    # A malformed file fails every reader at once, not one test deep in a suite.
    if header["verdict"] not in (["pass"], ["fail"]):
        raise ValueError(f"{file}: needs one '# verdict: pass|fail' line")
    if (header["verdict"] == ["pass"]) != name.startswith("right_"):
        raise ValueError(f"{file}: name and verdict disagree (right_* pass, wrong_* fail)")
    if header["verdict"] == ["fail"] and not header["message"]:
        raise ValueError(f"{file}: a wrong answer needs '# message:' lines")
    if not any(header["why"]):
        raise ValueError(f"{file}: needs a '# why:' line")
    if header["fails"] and header["verdict"] != ["fail"]:
        raise ValueError(f"{file}: only a wrong answer names the tests it fails")
    if header["sample"] and (header["verdict"] != ["fail"] or len(header["sample"]) != 1):
        raise ValueError(f"{file}: one '# sample: <test>' line, on a wrong answer")
    fails = tuple(sorted(" ".join(header["fails"]).split())) if header["fails"] else None
    grade_id = os.path.basename(os.path.dirname(file))
    sample = header["sample"][0] if header["sample"] else None
    return Entry(grade_id, name, file, source, header["verdict"][0], header["message"], fails, sample)


def entries(grade_id: str | None = None) -> list[Entry]:
    """Every entry (of ``grade_id``, or of all), sorted by grade_id and then by name."""
    return [_read(f) for f in sorted(glob.glob(os.path.join(DIR, grade_id or "*", "*.py")))]


def entry(grade_id: str, name: str) -> Entry:
    """One entry by name (``wrong_no_barrier``; a trailing ``.py`` is allowed)."""
    return _read(path(grade_id, name))


def source(grade_id: str, name: str) -> str:
    return entry(grade_id, name).source
