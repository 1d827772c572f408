"""Shared fixtures: one real nbgrader course per test session, generated from source/ once."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HYPOTHESIS_PROFILE", "grading")
os.environ["CH13_LANG"] = "both"  # the default the tests read: each sentence in Chinese, then English
# Tests import graders in this process: numba must pick its CUDA simulator before its first import.
if os.environ.get("CH13_DEVICE") != "gpu":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

from kit.course import Course  # noqa: E402
from kit.release import generate  # noqa: E402


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Course:
    """A course folder (config and source linked from the kit) with release and solutions generated."""
    c = Course.create(str(tmp_path_factory.mktemp("course")))
    generate(c)
    return c
