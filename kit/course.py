"""A course folder driven through the real nbgrader CLI: generate, submit, autograde, feedback, export.

Used by the main job (kit/demo.py), the class runner and the kit's tests. The course root holds
``nbgrader_config.py`` (the kit's, linked), ``source/`` (linked), and everything nbgrader writes.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys

import nbformat

from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells, hidden_test_cells
from kit.cells import TEST_PREFIX


def nbgrader_env() -> dict:
    env = dict(os.environ)
    # nbgrader shells out to `alembic` from PATH when it creates the gradebook.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = ROOT
    env.setdefault("PYTHONHASHSEED", "0")
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(env.get("TMPDIR", "/tmp"), "ch13-hypothesis")
    return env


@dataclasses.dataclass
class CellScore:
    score: float
    max_score: float
    report: str  # what the test cell's output says (the graders' report)


class Course:
    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

    @classmethod
    def create(cls, root: str) -> "Course":
        """A new course folder that uses the kit's config and source notebooks."""
        os.makedirs(root, exist_ok=True)
        for name in ("nbgrader_config.py", "source"):
            link = os.path.join(root, name)
            if not os.path.lexists(link):
                os.symlink(os.path.join(ROOT, name), link)
        return cls(root)

    def nbgrader(self, *args: str, check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "nbgrader", *args],
            cwd=self.root,
            env=nbgrader_env(),
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def generate(self) -> None:
        self.nbgrader("generate_assignment", ASSIGNMENT, "--force")

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    def release_notebook(self, name: str):
        return nbformat.read(self.path("release", ASSIGNMENT, name + ".ipynb"), as_version=4)

    def submit(self, student: str, notebooks: dict[str, object]) -> None:
        """notebooks: name -> NotebookNode, or raw text (to submit a broken file as it is)."""
        folder = self.path("submitted", student, ASSIGNMENT)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for name, nb in notebooks.items():
            with open(os.path.join(folder, name + ".ipynb"), "w", encoding="utf-8") as f:
                f.write(nb if isinstance(nb, str) else nbformat.writes(nb))

    def submission_from_answers(self, answers: dict[str, str]) -> dict[str, object]:
        """The release notebooks with the given answer cells filled in (grade_id -> source)."""
        out = {}
        for path in sorted(os.listdir(self.path("release", ASSIGNMENT))):
            if not path.endswith(".ipynb"):
                continue
            name = path[:-6]
            nb = self.release_notebook(name)
            cells = answer_cells(nb)
            if not any(gid in cells for gid in answers):
                continue
            for gid, source in answers.items():
                if gid in cells:
                    cells[gid].source = source
            out[name] = nb
        return out

    def autograde(self, *students: str, timeout: float | None = None) -> subprocess.CompletedProcess:
        args = ["autograde", ASSIGNMENT, "--force"]
        if len(students) == 1:
            args.append(f"--student={students[0]}")
        return self.nbgrader(*args, check=False, timeout=timeout)

    def scores(self, student: str) -> dict[str, CellScore]:
        """answer grade_id -> its score in the gradebook and the report in the autograded notebook."""
        from nbgrader.api import Gradebook

        reports = {}
        folder = self.path("autograded", student, ASSIGNMENT)
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                if name.endswith(".ipynb"):
                    nb = nbformat.read(os.path.join(folder, name), as_version=4)
                    for gid, cell in hidden_test_cells(nb).items():
                        reports[gid] = "".join(
                            o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream"
                        )
        out = {}
        with Gradebook(f"sqlite:///{self.path('gradebook.db')}") as gb:
            try:
                submission = gb.find_submission(ASSIGNMENT, student)
            except Exception:
                return {}
            for nb in submission.notebooks:
                for grade in nb.grades:
                    if grade.name.startswith(TEST_PREFIX):
                        gid = grade.name[len(TEST_PREFIX) :]
                        out[gid] = CellScore(grade.score, grade.max_score, reports.get(gid, ""))
        return out
