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


class Words:
    """A module's :class:`ch13lib.lang.Messages` table, made at its first use: for the kit's modules
    that are imported where ch13lib is not on sys.path yet (kit/jobs.py in the sandbox's launcher,
    kit/judge.py in the subjects' zygote). ``W = Words(key=(Chinese, English))``, then ``W("key",
    **fields)`` and ``W.both("key", **fields)`` as a Messages table's; the table is made (and its
    pairs checked) by :func:`source_ch13lib`'s copy of ch13lib.lang."""

    made: list = []  # every one, for tests/test_language.py: each table is checked like the rest

    def __init__(self, **texts: tuple[str, str]) -> None:
        self.texts = texts
        self._table = None
        Words.made.append(self)

    def table(self):
        if self._table is None:
            source_ch13lib()
            from ch13lib.lang import Messages

            self._table = Messages(**self.texts)
        return self._table

    def __call__(self, key: str, **fields) -> str:
        return self.table()(key, **fields)

    def both(self, key: str, **fields):
        return self.table().both(key, **fields)
