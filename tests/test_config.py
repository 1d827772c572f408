"""kit/config.py: the TA's knobs as typed config, the environment overriding, and the values handed
down explicitly to the processes that use them (docs/ta.md, "Limits and knobs")."""

from __future__ import annotations

import pytest
from traitlets import TraitError
from traitlets.config import Config

from kit.config import Judges, Sandbox
from kit.jobs import Watchdog
from kit.sandbox import parse_args

ENV = ["CH13_JOB_MEMORY_MB", "CH13_JOB_PROCESSES", "CH13_PROC_DATA_MB", "CH13_SANDBOX_NAMESPACES", "CH13_JUDGE_LAUNCH"]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ENV:
        monkeypatch.delenv(var, raising=False)


def test_defaults_are_the_measured_ones():
    s = Sandbox()
    assert (s.job_memory_mb, s.job_processes, s.proc_data_mb, s.namespaces) == (4096, 512, 2048, True)
    assert Judges().launch == "fork"
    assert s.sandbox_args() == ["--data-mb", "2048"]
    assert set(Sandbox.env_vars().values()) | set(Judges.env_vars().values()) == set(ENV)


def test_config_then_environment(monkeypatch):
    c = Config()
    c.Sandbox.job_memory_mb = 8192
    c.Sandbox.namespaces = False
    c.Judges.launch = "exec"
    s = Sandbox(config=c)
    assert s.job_memory_mb == 8192 and s.sandbox_args() == ["--data-mb", "2048", "--no-namespaces"]
    assert Judges(config=c).launch == "exec"
    monkeypatch.setenv("CH13_JOB_MEMORY_MB", "2048")  # the environment wins over the config file
    monkeypatch.setenv("CH13_SANDBOX_NAMESPACES", "1")
    s = Sandbox(config=c)
    assert s.job_memory_mb == 2048 and s.namespaces
    monkeypatch.setenv("CH13_JUDGE_LAUNCH", "sideways")
    with pytest.raises(TraitError):
        Judges()


def test_watchdog_and_sandbox_read_them(monkeypatch):
    monkeypatch.setenv("CH13_JOB_PROCESSES", "77")
    monkeypatch.setenv("CH13_PROC_DATA_MB", "1000")
    monkeypatch.setenv("CH13_SANDBOX_NAMESPACES", "0")
    w = Watchdog("ab" * 16)
    assert (w.limit >> 20, w.max_processes) == (4096, 77)
    assert Watchdog("ab" * 16, limit_mb=100, max_processes=5).max_processes == 5
    opts, cmd = parse_args(["--", "true"])  # a hand-run kit.sandbox: defaults and the environment
    assert (opts["data_mb"], opts["no_namespaces"], cmd) == (1000, True, ["true"])
    opts, _ = parse_args(["--data-mb", "3000", "--", "true"])  # the kit's callers: explicit
    assert (opts["data_mb"], opts["no_namespaces"]) == (3000, False)


def test_nbgrader_config_reaches_each_grading(monkeypatch):
    """A value set in nbgrader_config.py lives in the nbgrader process: ExternalGrade hands it to
    every grade_cell, and SafeExecute's kernel manager to its sandbox and watchdog."""
    import nbformat

    import kit.external_grade as eg
    from kit.execute import SandboxedKernelManager
    from kit.grading import Verdict

    c = Config()
    c.Sandbox.proc_data_mb = 1234
    c.Judges.launch = "exec"
    seen = []

    def fake_grade(grade_id, source, *, limits, launch, **kw):
        seen.append((limits.sandbox_args(), launch.launch))
        return Verdict(grade_id, [])

    monkeypatch.setattr(eg, "grade_cell", fake_grade)
    monkeypatch.setattr(eg, "warm", lambda tests, launch: seen.append(("warm", list(tests), launch.launch)))
    monkeypatch.setattr(eg, "answer_cells", lambda nb: {})
    cell = nbformat.v4.new_code_cell("", metadata={"nbgrader": {"points": 0}})
    monkeypatch.setattr(eg, "hidden_test_cells", lambda nb: {"counter": cell})
    eg.ExternalGrade(config=c).preprocess(nbformat.v4.new_notebook(), {})
    assert seen == [("warm", ["counter"], "exec"), (["--data-mb", "1234"], "exec")]
    # autograde's way: StartGrading starts the gradings before the kernel runs, with
    # ExternalGrade's configuration, and ExternalGrade collects them without grading again
    seen.clear()
    nb, resources = eg.StartGrading(config=c).preprocess(nbformat.v4.new_notebook(), {})
    eg.ExternalGrade(config=c).preprocess(nb, resources)
    assert seen == [("warm", ["counter"], "exec"), (["--data-mb", "1234"], "exec")]
    assert cell.outputs[-1]["data"]["text/plain"] == "0.0" and not resources
    assert SandboxedKernelManager(config=c).ch13_limits.proc_data_mb == 1234
