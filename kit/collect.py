"""Collect an LMS download (a zip of notebooks named by student) into submitted/ with nbgrader.

    python -m kit.collect DOWNLOAD.zip [--course DIR]

Copies the archive into downloaded/ch13_04/archive/ and runs `nbgrader zip_collect ch13_04` with
:class:`LmsCollector`, which recognises the common naming schemes (first match wins):

  Canvas      smithjohn_12345_67890_06_quiz.ipynb, smithjohn_LATE_12345_67890_06_quiz-1.ipynb
  Moodle      John Smith_12345_assignsubmission_file_/06_quiz.ipynb (folder per student)
              John Smith_12345_assignsubmission_file_06_quiz.ipynb
  Blackboard  ch13_04_jsmith_attempt_2026-11-20-10-00-00_06_quiz.ipynb
  plain       jsmith/06_quiz.ipynb  or  jsmith/ch13_04/06_quiz.ipynb

The file part must name one of the assignment's notebooks; anything else is skipped with a warning.
Student ids are lower-cased with every other character made `_` (nbgrader's ids are folder names).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from traitlets import List, Unicode

from kit import ASSIGNMENT

NOTEBOOK = r"(?P<file_id>\d\d_[a-z_]+?)(?:-\d+)?\.ipynb"
SCHEMES = [
    rf".*/(?P<student_id>[^/_]+)(?:_LATE)?_\d+_\d+_{NOTEBOOK}$",  # Canvas
    rf".*/(?P<student_id>[^/]+?)_\d+_assignsubmission_file_/?(?:.*/)?{NOTEBOOK}$",  # Moodle
    rf".*/[^/]*?_(?P<student_id>[^/_]+)_attempt_(?P<timestamp>[0-9\-]+)_{NOTEBOOK}$",  # Blackboard
    rf".*/(?P<student_id>[^/]+)/(?:{ASSIGNMENT}/)?{NOTEBOOK}$",  # plain folders
]


def slug(student: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", student.strip().lower()).strip("_")


class LmsCollector(FileNameCollectorPlugin):
    """Tries each naming scheme in turn; the notebook name is checked against the assignment's."""

    named_regexps = List(
        Unicode(),
        default_value=SCHEMES,
        help="Regular expressions tried in order on each extracted file's path; each "
        "needs the (?P<student_id>) and (?P<file_id>) groups.",
    ).tag(config=True)

    def collect(self, submitted_file: str):
        if os.path.splitext(submitted_file)[1] not in self.valid_ext:
            return None
        for pattern in self.named_regexps:
            match = re.match(pattern, submitted_file)
            if match:
                info = {k: v for k, v in match.groupdict().items() if v is not None}
                info["student_id"] = slug(info["student_id"])
                if info.get("timestamp"):  # Blackboard's 2026-11-20-10-00-00 -> ISO form
                    d = info["timestamp"].split("-")
                    info["timestamp"] = f"{d[0]}-{d[1]}-{d[2]} {':'.join(d[3:6])}" if len(d) == 6 else None
                    if not info["timestamp"]:
                        del info["timestamp"]
                return info
        self.log.warning("No naming scheme matched, skipped: %s", submitted_file)
        return None


def collect(course_root: str, archive: str) -> None:
    from kit.course import Course

    course = Course(course_root)
    folder = course.path("downloaded", ASSIGNMENT, "archive")
    os.makedirs(folder, exist_ok=True)
    shutil.copy(archive, folder)
    course.nbgrader("zip_collect", ASSIGNMENT, "--force", "--collector=kit.collect.LmsCollector")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kit.collect", description=__doc__.split("\n\n")[0])
    ap.add_argument("archive")
    ap.add_argument("--course", default=".")
    args = ap.parse_args(argv)
    collect(args.course, args.archive)
    print(f"collected into {os.path.join(args.course, 'submitted')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
