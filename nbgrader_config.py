"""nbgrader configuration of the Ch13 §04 kit: the plain `nbgrader autograde ch13_04` grades
tamper-proof with the kit's graders (docs/design.md). The course root is the folder nbgrader runs in."""

# `kit` comes from the venv, where `make setup` installs it (editable), whatever folder nbgrader runs in.
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearMarkScheme,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    IncludeHeaderFooter,
    LimitOutput,
    LockCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from kit.execute import SafeExecute
from kit.external_grade import ExternalGrade, StartGrading
from kit.overwrite import RobustOverwriteCells
from kit.stubs import ClearSolutionsInPlace

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "ch13_04_course"
c.CourseDirectory.solution_directory = "solutions"
# *.verdicts.json: ExternalGrade's records beside the autograded notebooks (kit/report.py reads them);
# never copied from a submission into autograded/, nor from autograded/ into the feedback.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    ".hypothesis",
    "*.pt",
    "ray_*",
    "*.verdicts.json",
]

# Each answer region becomes this stub in the release (indented like the region it replaces).
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE / 在此作答\nraise NotImplementedError()"}
c.ClearSolutions.enforce_metadata = True
# nbgrader's own list, with ClearSolutions replaced: cells marked `ch13.stub = in_place` (the quiz)
# keep no raise below the stub the student fills in (kit/stubs.py).
from nbgrader.converters import GenerateAssignment  # noqa: E402

c.GenerateAssignment.preprocessors = [
    ClearSolutionsInPlace if p.__name__ == "ClearSolutions" else p
    for p in GenerateAssignment.class_traits()["preprocessors"].default()
]

# Solutions are committed: without execution they are deterministic (and quick to regenerate).
c.GenerateSolution.preprocessors = [IncludeHeaderFooter, LockCells, ClearOutput, ClearMarkScheme]

# A deleted or stripped locked cell is put back from the gradebook instead of vanishing
# (RobustOverwriteCells: nbgrader's own version raises KeyError after a locked markdown cell).
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    RobustOverwriteCells,
    CheckCellMetadata,
]
c.RobustOverwriteCells.add_missing_cells = True

# NB: order matters. StartGrading starts grading the answer cells (outside the kernel) while
# SafeExecute runs the (sandboxed) kernel; ExternalGrade then waits for the verdicts and overwrites
# every test cell's outputs with them, before anything reads or limits those outputs.
c.Autograde.autograde_preprocessors = [
    StartGrading,
    SafeExecute,
    ExternalGrade,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
c.Execute.timeout = 30  # per cell: answer cells only define things, self-checks stand aside
c.Execute.interrupt_on_timeout = True
c.Execute.raise_on_iopub_timeout = True
c.ExternalGrade.timeout = 0.0  # 0: each grader's own hang guard (graders/<id>.py)

# The kit's own knobs (kit/config.py; every one, its default and who sets it: docs/ta.md "Limits and
# knobs"). Left at their defaults here; an environment variable (CH13_JOB_MEMORY_MB, ...) overrides.
# c.Sandbox.job_memory_mb = 4096  # one job's processes together, resident MiB (the watchdog)
# c.Sandbox.job_processes = 512  # one job's processes at once
# c.Sandbox.proc_data_mb = 2048  # RLIMIT_DATA of each sandboxed process, MiB
# c.Sandbox.namespaces = True  # False: the sandbox's limits-only tier
# c.Judges.launch = "fork"  # "exec": a fresh `python -m graders` per answer cell
