"""Regenerate release/ and solutions/ from source/ with nbgrader (``make release``), then commit them.

A kit test regenerates both into a temporary course and fails when the committed ones are stale.
"""
from __future__ import annotations

import sys

from kit import ASSIGNMENT, ROOT
from kit.course import Course


def generate(course: Course) -> None:
    course.generate()
    course.nbgrader("generate_solution", ASSIGNMENT, "--force")


def main() -> int:
    generate(Course(ROOT))
    print(f"release/{ASSIGNMENT} and solutions/{ASSIGNMENT} regenerated from source/{ASSIGNMENT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
