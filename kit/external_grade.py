"""nbgrader preprocessor: score every hidden-test cell with the kit's graders, outside the kernel.

Runs in nbgrader's autograde pipeline after the notebook was executed. For each locked test cell
``test_<grade_id>`` it takes the source of the answer cell ``<grade_id>`` from the submitted
notebook, grades it in a separate sandboxed process (kit/grading.py), and replaces the test cell's
outputs with the graders' report and the score. Whatever the student's kernel printed or did in
that cell is discarded, so nothing done inside the kernel can change a score.

The verdicts themselves, as records (kit/grading.py: Verdict.to_json), go to one file beside the
autograded notebook, ``<notebook>.verdicts.json`` (grade_id -> record): what the TA's report reads
(kit/report.py), so no reader parses the text the student reads.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import nbformat
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import compute_checksum
from traitlets import Bool, Float, Int

from kit.answers import answer_cells, hidden_test_cells
from kit.config import Feedback, Judges, Sandbox
from kit.grading import VERDICTS_SUFFIX, grade_cell, use_language, warm, write_verdicts


def _untouched(cell) -> bool:
    """The release's stub, unchanged: nbgrader stored its checksum when it made the release."""
    stored = cell.metadata.get("nbgrader", {}).get("checksum")
    return bool(stored) and stored == compute_checksum(cell)


def _inputs(answer) -> tuple[str | None, bool]:
    """What a grading reads of a notebook: the answer cell's source (None: no such cell) and
    whether it is the release's untouched stub."""
    return (answer.source, _untouched(answer)) if answer is not None else (None, False)


class StartGrading(NbGraderPreprocessor):
    """Autograde's first step: every answer cell's grading starts now, beside the kernel's run of
    the notebook, instead of after it. A grading reads only the answer cells' sources, which the
    kernel cannot change (the sanitize steps before this one already put back the locked cells),
    so the kernel's run and the graders' work overlap; ExternalGrade collects the verdicts.

    At a submission's first notebook the gradings of its later notebooks start too, read from the
    submitted files, so that they run while the earlier notebooks' kernels do. Such a grading is
    only a guess: its notebook takes it when the grade_id, the answer's source and whether it is
    the untouched stub are what that notebook holds after its own sanitize steps (the inputs
    that decide a verdict), and grades that cell again otherwise. ExternalGrade's configuration
    (c.ExternalGrade...) applies."""

    def preprocess(self, nb, resources):
        grade = ExternalGrade(parent=self)
        names = resources.get("nbgrader", {})
        student, notebook = names.get("student"), names.get("notebook")
        later = _later_notebooks(self, notebook)
        with _ahead_lock:
            if later is not None:  # a submission's first notebook: this one's gradings first, then the others'
                _ahead.clear()
                ahead = grade.start_ahead([(notebook, nb)] + [(None, path) for path in later]) if later else {}
                _ahead.update({(student, name): gradings for name, gradings in ahead.items()})
            guessed = _ahead.pop((student, notebook), {})
        resources[_PENDING] = grade.start(nb, guessed)
        return nb, resources


# The gradings a submission's first notebook started: (student, notebook) -> grade_id -> (inputs, Future).
_ahead: dict = {}
_ahead_lock = threading.Lock()


def _later_notebooks(step: NbGraderPreprocessor, current: str | None) -> list[str] | None:
    """The paths of the submitted notebooks autograde converts after ``current`` when ``current``
    is the submission's first (nbgrader's converter, the exporter's parent, lists them in the order
    it converts them); None for any other notebook, or outside nbgrader's autograde."""
    converter = getattr(getattr(step, "parent", None), "parent", None)
    notebooks = [str(n) for n in getattr(converter, "notebooks", None) or []]
    if not notebooks or os.path.splitext(os.path.basename(notebooks[0]))[0] != current:
        return None
    return notebooks[1:]


class WarmJudges(NbGraderPreprocessor):
    """An alternative first step, measured by bench/bench_autograde.py's --after-kernel course: the
    judges' zygote imports this notebook's graders while the kernel runs; the gradings start after
    it, in ExternalGrade."""

    def preprocess(self, nb, resources):
        warm(hidden_test_cells(nb), launch=Judges(parent=self))
        return nb, resources


# resources' key under which StartGrading hands its gradings to ExternalGrade (one notebook's)
_PENDING = "ch13_gradings"


class ExternalGrade(NbGraderPreprocessor):
    timeout = Float(
        0.0,
        help="Hang guard per answer cell, seconds (0: the grader's own). "
        "Budgets inside the graders are in steps, not seconds.",
    ).tag(config=True)
    sandbox = Bool(True, help="Run graders in kit.sandbox (no network, unprivileged, limits).").tag(config=True)

    cells_at_once = Int(
        0,
        help="Answer cells of one notebook graded at the same time (0: as many as the machine has "
        "cores). Each grading is a judge and a subject that often wait; the class runner sets 1, "
        "since it grades students side by side. Scores do not depend on it: budgets are in steps "
        "and CPU-seconds.",
    ).tag(config=True)

    def _grader(self, grade_ids):
        """``grade(grade_id, source, untouched) -> Verdict`` with this process's knobs (kit.config:
        c.Sandbox..., c.Judges..., c.Feedback... and the environment, handed to each grading
        explicitly), once the judges' zygote has imported these graders."""
        limits, launch, feedback = Sandbox(parent=self), Judges(parent=self), Feedback(parent=self)
        use_language(feedback.language)  # the report's own words, as the judges' (grade_cell passes it on)
        warm(grade_ids, launch=launch)

        def grade(grade_id: str, source: str | None, untouched: bool):
            return grade_cell(
                grade_id,
                source,
                timeout_s=self.timeout or None,
                sandbox=self.sandbox,
                untouched=untouched,
                limits=limits,
                launch=launch,
                feedback=feedback,
            )

        return grade

    def _pool(self, cells: int) -> ThreadPoolExecutor:
        width = max(1, min(cells, self.cells_at_once or os.cpu_count() or 1))
        return ThreadPoolExecutor(width, thread_name_prefix="ch13-grade")

    def start(self, nb, guessed: dict | None = None) -> dict[str, Future]:
        """Start grading every hidden test cell's answer cell of ``nb``, ``cells_at_once`` at a
        time, in threads of their own; grade_id -> Future of its Verdict, in test-cell order.
        ``guessed`` (grade_id -> (inputs, Future), :meth:`start_ahead`): a grading already under
        way, taken where its inputs are this cell's."""
        answers, tests = answer_cells(nb), hidden_test_cells(nb)
        inputs = {gid: _inputs(answers.get(gid)) for gid in tests}
        guessed = {gid: g[1] for gid, g in (guessed or {}).items() if gid in inputs and g[0] == inputs[gid]}
        fresh = [gid for gid in tests if gid not in guessed]
        pending = dict(guessed)
        if fresh:
            grade, pool = self._grader(fresh), self._pool(len(fresh))
            pending.update({gid: pool.submit(grade, gid, *inputs[gid]) for gid in fresh})
            pool.shutdown(wait=False)  # the threads end with their last grading
        return {gid: pending[gid] for gid in tests}

    def start_ahead(self, notebooks: list[tuple[str | None, object]]) -> dict[str, dict]:
        """Start grading these notebooks' answer cells, in their order, in one pool ``cells_at_once``
        wide: notebook -> grade_id -> (inputs, Future). Each is (name, notebook) or (None, the path
        of a submitted one); a submitted notebook that does not read is left to its own turn."""
        cells = {}
        for name, nb in notebooks:
            try:
                if name is None:
                    name, nb = os.path.splitext(os.path.basename(nb))[0], nbformat.read(nb, as_version=4)
                answers, tests = answer_cells(nb), hidden_test_cells(nb)
            except Exception:  # noqa: BLE001 - broken JSON or cells: its own turn says what is wrong
                continue
            cells[name] = {gid: _inputs(answers.get(gid)) for gid in tests}
        grade_ids = [gid for notebook in cells.values() for gid in notebook]
        if not grade_ids:
            return {}
        grade, pool = self._grader(grade_ids), self._pool(len(grade_ids))
        ahead = {
            name: {gid: (inputs, pool.submit(grade, gid, *inputs)) for gid, inputs in notebook.items()}
            for name, notebook in cells.items()
        }
        pool.shutdown(wait=False)  # the threads end with their last grading
        return ahead

    def preprocess(self, nb, resources):
        tests = hidden_test_cells(nb)
        pending = resources.pop(_PENDING, None)
        if pending is None or list(pending) != list(tests):  # no StartGrading step, or another notebook's
            pending = self.start(nb)
        graded = {grade_id: future.result() for grade_id, future in pending.items()}
        verdicts = {}
        for grade_id, cell in tests.items():
            verdict = graded[grade_id]
            points = float(cell.metadata["nbgrader"]["points"])
            if abs(points - verdict.max_score) > 1e-9:
                # The notebook and its grader disagree: an instructor's mistake, never the student's.
                raise ValueError(
                    f"test cell test_{grade_id} is worth {points:g} points but its grader "
                    f"totals {verdict.max_score:g}: fix the source notebook or the grader"
                )
            self.log.info("%s: %g / %g", grade_id, verdict.score, verdict.max_score)
            verdicts[grade_id] = verdict
            cell.outputs = [
                new_output("stream", name="stdout", text=verdict.report() + "\n"),
                # a picture of a failure, where a grader drew one (static PNG: the feedback HTML carries it)
                *(
                    new_output("display_data", data={"image/png": png, "text/plain": f"<picture: {test}>"})
                    for test, png in verdict.pictures()
                ),
                # nbgrader reads a lone float result as the cell's partial credit.
                new_output(
                    "execute_result",
                    data={"text/plain": repr(float(verdict.score))},
                    execution_count=cell.get("execution_count"),
                ),
            ]
        meta = resources.get("metadata") or {}
        if meta.get("path") and meta.get("name"):  # nbgrader's autograde: the autograded notebook's folder
            # always written, even empty: it replaces any file of that name copied from the submission
            write_verdicts(os.path.join(meta["path"], meta["name"] + VERDICTS_SUFFIX), verdicts)
        return nb, resources
