"""Does an LMS download land in submitted/ under the right student, whatever the LMS's naming?"""

from __future__ import annotations

import os
import zipfile

import pytest

from kit import ASSIGNMENT
from kit.collect import collect
from kit.course import Course

DOWNLOAD = {  # name in the zip -> expected submitted/<student>/ch13_04/<notebook>
    "smithjohn_12345_67890_06_quiz.ipynb": ("smithjohn", "06_quiz"),
    "doejane_LATE_2222_3333_06_quiz-1.ipynb": ("doejane", "06_quiz"),
    "Li Wei_4444_assignsubmission_file_/06_quiz.ipynb": ("li_wei", "06_quiz"),
    "Ana Ruiz_5555_assignsubmission_file_06_quiz.ipynb": ("ana_ruiz", "06_quiz"),
    "ch13_04_bchen_attempt_2026-11-20-10-00-00_06_quiz.ipynb": ("bchen", "06_quiz"),
    "kfoo/06_quiz.ipynb": ("kfoo", "06_quiz"),
    "notes.txt": None,
}


@pytest.mark.slow
def test_zip_collect_recognises_common_lms_names(tmp_path, course):
    root = Course.create(str(tmp_path / "c"))
    root.generate()
    archive = tmp_path / "download.zip"
    body = open(course.path("release", ASSIGNMENT, "06_quiz.ipynb"), encoding="utf-8").read()
    with zipfile.ZipFile(archive, "w") as z:
        for name in DOWNLOAD:
            z.writestr(name, body)
    collect(root.root, str(archive))
    for name, where in DOWNLOAD.items():
        if where:
            student, notebook = where
            path = root.path("submitted", student, ASSIGNMENT, notebook + ".ipynb")
            assert os.path.exists(path), f"{name} was not collected as {student}/{notebook}"
    assert sorted(os.listdir(root.path("submitted"))) == sorted(w[0] for w in DOWNLOAD.values() if w)
