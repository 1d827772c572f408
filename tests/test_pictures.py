"""Pictures in the self-checks and the feedback (ch13lib/pictures.py): drawn from plain data, carried
from the judge's result line into the test cell's outputs, and shown in the TA's report."""

from __future__ import annotations

import base64
import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from kit import source_ch13lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
source_ch13lib()  # the copy beside the notebooks

from ch13lib import pictures  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def test_each_picture_is_a_png_drawn_from_plain_data():
    accesses = {
        "arrays": [["cache", "shared", 0, 8], ["a", "global", 0, 8]],
        "events": [[1, 0, 0, "r"], [0, 0, 0, "w"], [0, 1, 1, "w"], [0, 0, 1, "r"], [0, 1, 1, "w"]],
        "blockdim": [8, 1, 1],
        "griddim": [1, 1, 1],
        "bad_index": None,
        "fault_thread": 1,
    }
    lanes = [
        ["main", 10, "c = Counter()", "wrote c"],
        ["...", 0, "", "3 more steps"],
        ["T1", 13, "x += 1", "read x = 0"],
    ]
    for png in (
        pictures.cuda_accesses(accesses, "thread 1 of block 0: a data race"),
        pictures.cuda_accesses({**accesses, "bad_index": ["a", "global", [9]]}, "read a[9]: out of bounds"),
        pictures.swimlanes(lanes, "an update was lost"),
        pictures.zero_memory(70e9, 8),
        pictures.pipeline([[0, 0, 1, "F", 0], [1, 1, 2, "F", 0], [1, 2, 3, "B", 0], [0, 3, 4, "B", 0]], 2, 4, 4),
        pictures.ring([[0, 0, 1, 2, 0], [1, 0, 0, 2, -1], [0, 1, 1, 8, 0]], 2, 8, "rank 0 sent 10 elements"),
    ):
        assert png.startswith(PNG) and 5_000 < len(png) < 400_000


@pytest.fixture(scope="module")
def autograded_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("course") / "autograded" / "s1" / "ch13_04"


@pytest.fixture(scope="module")
def graded_histogram(autograded_folder):
    """The ExternalGrade preprocessor (what `nbgrader autograde` runs) on a notebook whose histogram
    is the unprotected `bins[v] += 1`: a sandboxed judge and subject, as in a real autograde, whose
    autograded notebook (with its verdicts beside it) is in ``autograded_folder``."""
    from graders._catalogue import source as catalogue_source
    from kit.external_grade import ExternalGrade

    source = catalogue_source("histogram", "wrong_plain_increment")
    answer = new_code_cell(source, metadata={"nbgrader": {"grade_id": "histogram", "solution": True}})
    test = new_code_cell(
        "# hidden tests", metadata={"nbgrader": {"grade_id": "test_histogram", "grade": True, "points": 8}}
    )
    nb = new_notebook(cells=[answer, test])
    autograded_folder.mkdir(parents=True)
    ExternalGrade().preprocess(nb, {"metadata": {"path": str(autograded_folder), "name": "02_cuda_kernels"}})
    nbformat.write(nb, str(autograded_folder / "02_cuda_kernels.ipynb"))
    return nb


def test_a_fault_reaches_the_feedback_as_an_image(graded_histogram):
    outputs = graded_histogram.cells[1].outputs
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert images and base64.b64decode(images[0].data["image/png"]).startswith(PNG)
    assert "<picture: " in images[0].data["text/plain"]
    assert outputs[-1].output_type == "execute_result"  # nbgrader still reads the partial credit last
    assert "read-modify-write" in outputs[0].text


def test_the_report_shows_the_picture_of_a_common_failure(graded_histogram, autograded_folder):
    from kit import report

    root = autograded_folder.parents[2]

    class Course:
        def path(self, *parts):
            return str(root.joinpath(*parts))

    pictures_seen: dict = {}
    report._failures(Course(), ["s1"], pictures_seen)
    assert pictures_seen and all(v for v in pictures_seen.values())
    # read from the verdicts file beside the notebook: the pictures its test cell shows
    shown = {o.data["image/png"] for o in graded_histogram.cells[1].outputs if o.output_type == "display_data"}
    assert set(pictures_seen.values()) <= shown
