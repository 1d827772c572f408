"""The TA-facing side of the kit: nbgrader glue, the sandbox, the class runner, the demo."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSIGNMENT = "ch13_04"
SOURCE_DIR = os.path.join(ROOT, "source", ASSIGNMENT)  # the source notebooks, and ch13lib beside them
# What the processes the kit starts to judge a cell (judge, subject, self-check run) hold fixed: one hash
# order (the same verdict on every run), one OpenMP thread (a zygote that imported torch with more
# has threads, and refuses to fork; 2 cores shared by many jobs), Ray without a login or telemetry.
STEADY_ENV = {
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}


def source_ch13lib() -> str:
    """Have ``import ch13lib`` find the pristine copy, source/ch13_04/ch13lib: SOURCE_DIR goes first
    on sys.path unless it is there already. The one sys.path edit for ch13lib in the kit's own code
    (the judge through graders/__init__.py, the GPU checks, benchmarks, tests); returns SOURCE_DIR.

    ch13lib is deliberately not installed with the kit: a notebook's kernel imports the copy beside
    it and the self-check runner the copy named by CH13_SELFCHECK_LIB, and an installed fallback
    would hand either a module its own copy lacks (setuptools' editable finder resolves
    ``ch13lib.X`` from source/ when the first copy has no X), and would import ch13lib from a
    folder that kit/audit.py's ``library_roots`` (which finds it through sys.path) does not trust.
    Processes started by the kit get it on PYTHONPATH instead (kit/judge.py: Subject._env)."""
    if SOURCE_DIR not in sys.path:
        sys.path.insert(0, SOURCE_DIR)
    return SOURCE_DIR
