"""Verdicts as records (kit/grading.py: Verdict.to_json, write_verdicts): what ExternalGrade writes
beside each autograded notebook and what the TA's report reads back, never the report's wording.
Fast: no nbgrader run (tests/test_pipeline.py checks the file a real autograde writes)."""

from __future__ import annotations

import base64
import json
import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from kit import ASSIGNMENT
from kit.grading import VERDICTS_FORMAT, Verdict, grade_cell, read_verdicts, write_verdicts
from kit.result import Result

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()


def _result(test, passed, message="", example="", picture="", max_points=1.0):
    return Result(test, max_points if passed else 0.0, max_points, passed, message, example, picture)


def sample() -> Verdict:
    return Verdict(
        "histogram",
        [
            _result("counts", True, max_points=3.0),
            _result("no_race", False, "an update to bins[3] was lost", "n=4", PNG, 2.0),
            _result("big", False, "an update to bins[3] was lost"),
        ],
        problem="the grading process ended before every test had run",
        flags=["line 2: uses sys.modules: sys.modules"],
    )


def test_a_verdict_survives_its_json_record():
    v = sample()
    record = json.loads(json.dumps(v.to_json()))
    assert record["format"] == VERDICTS_FORMAT
    assert (record["score"], record["max_score"], record["tampered"]) == (3.0, 6.0, False)
    back = Verdict.from_json(record)
    assert back == v and back.report() == v.report() and back.pictures() == v.pictures()
    refused = Verdict("quiz", [_result("q1", False, "not graded")], refused=["line 1: imports ctypes"])
    assert Verdict.from_json(refused.to_json()).tampered


def test_a_record_of_another_format_is_refused():
    record = sample().to_json()
    with pytest.raises(ValueError):
        Verdict.from_json({**record, "format": VERDICTS_FORMAT + 1})


def test_the_judge_says_it_refused_a_cell_as_data():
    """The screen's refusal reaches the verdict as a field, not only inside the tests' messages."""
    refused = grade_cell("amdahl", "import ctypes\ndef amdahl_speedup(p, n):\n    return 1\n", sandbox=False)
    assert refused.tampered and refused.score == 0 and "imports ctypes" in refused.refused[0]
    honest = grade_cell("amdahl", "def amdahl_speedup(p, n):\n    return n\n", sandbox=False)
    assert not honest.tampered and honest.refused == []


def test_the_verdicts_file_replaces_what_was_there(tmp_path):
    """Written through a temporary file and os.replace: a symlink planted at its name is replaced,
    its target is left alone, and a file left read-only by an earlier autograde is replaced too."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    path = tmp_path / "06_quiz.verdicts.json"
    path.symlink_to(target)
    write_verdicts(str(path), {"histogram": sample()})
    assert not path.is_symlink() and target.read_text() == "keep me"
    assert read_verdicts(str(path)) == {"histogram": sample()}
    path.chmod(0o444)  # nbgrader's permissions on what autograde wrote
    write_verdicts(str(path), {})
    assert read_verdicts(str(path)) == {}
    assert sorted(os.listdir(tmp_path)) == ["06_quiz.verdicts.json", "elsewhere.txt"]  # no temporary left


class _Course:
    def __init__(self, root):
        self.root = root

    def path(self, *parts):
        return str(self.root.joinpath(*parts))


def autograded(tmp_path, student: str, verdicts: dict[str, Verdict], name="02_cuda_kernels") -> _Course:
    """An autograded notebook whose test cells say nothing, and its verdicts file: the report must
    read the file."""
    folder = tmp_path / "autograded" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    cells = []
    for gid in verdicts:
        cells.append(new_code_cell("", metadata={"nbgrader": {"grade_id": gid, "solution": True}}))
        cells.append(new_code_cell("", metadata={"nbgrader": {"grade_id": f"test_{gid}", "grade": True, "points": 1}}))
    nbformat.write(new_notebook(cells=cells), str(folder / f"{name}.ipynb"))
    write_verdicts(str(folder / f"{name}.verdicts.json"), verdicts)
    return _Course(tmp_path)


def test_the_report_reads_failures_and_pictures_from_the_verdicts(tmp_path):
    from kit import report

    course = autograded(tmp_path, "s1", {"histogram": sample()})
    autograded(tmp_path, "s2", {"histogram": sample()})
    pictures: dict = {}
    seen = report._failures(course, ["s1", "s2", "absent"], pictures)
    # "big" fails for the same reason as the test above it: the report counts the first only
    assert seen == {("histogram.no_race", "an update to bins[N] was lost"): 2}
    assert pictures == {("histogram.no_race", "an update to bins[N] was lost"): PNG}


def test_the_report_flags_problems_and_refusals_from_the_verdicts(tmp_path):
    from kit import report

    refused = Verdict("quiz", [_result("q1", False, "not graded")], refused=["line 1: imports ctypes"])
    course = autograded(tmp_path, "s1", {"histogram": sample(), "quiz": refused})
    assert report._grader_problems(course, "s1") == [
        "histogram: the grading process ended before every test had run",
        "quiz: flagged for review (tampering with the grader)",
    ]
    assert report._grader_problems(course, "absent") == []
    # a problem said in both languages, a line each, is one line of the TA's report
    both = Verdict(
        "quiz", [_result("q1", False, "no verdict")], problem="评分进程提前结束\nthe grading process ended early"
    )
    autograded(tmp_path, "s3", {"histogram": sample(), "quiz": both})
    assert "quiz: 评分进程提前结束 / the grading process ended early" in report._grader_problems(course, "s3")
    os.remove(tmp_path / "autograded" / "s1" / ASSIGNMENT / "02_cuda_kernels.verdicts.json")
    assert report._grader_problems(course, "s1") == [
        "02_cuda_kernels.ipynb: no readable verdicts beside the autograded notebook "
        "(graded by an older kit? regrade it)"
    ]
