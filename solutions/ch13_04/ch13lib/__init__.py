"""Public helpers for the Ch13 §04 notebooks: the simulators the exercises run on, and self-checks.

This package ships to students with the release. The hidden graders use the same simulators with
larger budgets and more scenarios; the scenarios themselves stay hidden.
"""

import os


def grading() -> bool:
    """True while nbgrader autograde executes the notebook: self-checks then stand aside
    (the hidden graders decide the score, outside the notebook)."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"
