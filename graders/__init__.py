"""Hidden graders of the Ch13 §04 kit. Never part of a release.

One module per contract ``grade_id`` (``graders/counter.py`` grades the answer cell ``counter``),
each defining ``grader = Grader("<grade_id>")``. ``python -m graders GRADE_ID ANSWER_FILE`` runs
one in its own process; ``kit.external_grade`` does that for every test cell during
``nbgrader autograde``.
"""

import importlib
import os

from hypothesis import HealthCheck, settings

from kit import source_ch13lib

# Grading must be reproducible: no randomness from the clock, no example database on disk.
settings.register_profile(
    "grading",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "grading"))

# The public simulators live beside the notebooks (they ship to students for self-checks);
# graders import the pristine copy from source/, never a student's (ch13lib is not installed:
# kit.source_ch13lib says why).
SOURCE_DIR = source_ch13lib()


def load_grader(grade_id: str):
    """The Grader registered for ``grade_id`` (its module is named after it)."""
    if not grade_id.isidentifier():
        raise KeyError(grade_id)
    try:
        module = importlib.import_module(f"graders.{grade_id}")
    except ModuleNotFoundError as e:
        if e.name == f"graders.{grade_id}":
            raise KeyError(grade_id) from None
        raise
    return module.grader


def grade_ids() -> list[str]:
    """Every grade_id that has a grader module."""
    here = os.path.dirname(os.path.abspath(__file__))
    skip = {"__init__", "__main__", "api", "screen"}
    return sorted(
        f[:-3] for f in os.listdir(here) if f.endswith(".py") and f[:-3] not in skip and not f.startswith("_")
    )
