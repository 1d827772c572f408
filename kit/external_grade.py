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
from concurrent.futures import Future, ThreadPoolExecutor

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


class StartGrading(NbGraderPreprocessor):
    """Autograde's first step: every answer cell's grading starts now, beside the kernel's run of
    the notebook, instead of after it. A grading reads only the answer cells' sources, which the
    kernel cannot change (the sanitize steps before this one already put back the locked cells),
    so the kernel's run and the graders' work overlap; ExternalGrade collects the verdicts.
    ExternalGrade's configuration (c.ExternalGrade...) applies."""

    def preprocess(self, nb, resources):
        resources[_PENDING] = ExternalGrade(parent=self).start(nb)
        return nb, resources


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

    def start(self, nb) -> dict[str, Future]:
        """Start grading every hidden test cell's answer cell of ``nb``, ``cells_at_once`` at a
        time, in threads of their own; grade_id -> Future of its Verdict, in test-cell order."""
        answers = answer_cells(nb)
        tests = hidden_test_cells(nb)
        # kit.config's knobs, from this nbgrader process's config (c.Sandbox..., c.Judges...) and
        # the environment: handed to each grading explicitly (its watchdog, judge and subject)
        limits, launch, feedback = Sandbox(parent=self), Judges(parent=self), Feedback(parent=self)
        use_language(feedback.language)  # the report's own words, as the judges' (grade_cell passes it on)
        warm(tests, launch=launch)  # the judges' zygote imports these graders before the first

        def grade(grade_id: str):
            answer = answers.get(grade_id)
            return grade_cell(
                grade_id,
                answer.source if answer is not None else None,
                timeout_s=self.timeout or None,
                sandbox=self.sandbox,
                untouched=answer is not None and _untouched(answer),
                limits=limits,
                launch=launch,
                feedback=feedback,
            )

        width = max(1, min(len(tests), self.cells_at_once or os.cpu_count() or 1))
        pool = ThreadPoolExecutor(width, thread_name_prefix="ch13-grade")
        pending = {grade_id: pool.submit(grade, grade_id) for grade_id in tests}
        pool.shutdown(wait=False)  # the threads end with their last grading
        return pending

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
