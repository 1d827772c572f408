"""Regenerate release/ and solutions/ from source/ with nbgrader (``make release``), and the
graders' plans (graders/plans.json), then commit them.

A kit test regenerates all three and fails when the committed ones are stale.
"""

from __future__ import annotations

import os
import subprocess
import sys

from kit import ASSIGNMENT, ROOT
from kit.course import Course


def generate(course: Course) -> None:
    course.generate()
    course.nbgrader("generate_solution", ASSIGNMENT, "--force")


PLANS = os.path.join(ROOT, "graders", "plans.json")


def plans_text() -> str:
    """Every grader's tests and points, as graders/plans.json holds them (one process, trusted code)."""
    code = (
        "import json, graders; from graders import grade_ids, load_grader; "
        "print(json.dumps({g: load_grader(g).plan() for g in grade_ids()}, indent=1, sort_keys=True))"
    )
    env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_ENABLE_CUDASIM="1")
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


def main() -> int:
    text = plans_text()  # before the file is opened: a grader that fails to load leaves it as it was
    with open(PLANS, "w", encoding="utf-8") as f:
        f.write(text)
    print("graders/plans.json regenerated")
    generate(Course(ROOT))
    print(f"release/{ASSIGNMENT} and solutions/{ASSIGNMENT} regenerated from source/{ASSIGNMENT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
