"""kit/execute.py's last guard: a notebook whose kernel outlives every cell's timeout is stopped,
its outputs so far kept, and the autograde goes on (a wedged kernel once held a whole class's run)."""

from __future__ import annotations

import os
import time

import nbformat
import pytest


@pytest.mark.slow
def test_a_kernel_past_the_notebook_limit_is_stopped_and_the_notebook_kept(tmp_path):
    from kit.execute import SafeExecute

    work = tmp_path / "course" / "autograded" / "s1" / "a1"
    work.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("print('first')"),
        nbformat.v4.new_code_cell("import time\ntime.sleep(600)"),  # within its own 900 s timeout
        nbformat.v4.new_code_cell("print('never')"),
    ]
    run = SafeExecute(timeout=900, notebook_timeout=20)  # 20 s: the kernel starts even under load
    start = time.monotonic()
    out, _ = run.preprocess(nb, {"metadata": {"path": os.fspath(work)}})
    took = time.monotonic() - start
    assert took < 300, took  # the guard, not the cell's 600 s, ended it
    first = "".join(o.get("text", "") for o in out.cells[0].outputs)
    assert "the notebook ran past 20 s: its kernel was stopped" in first, first
    assert not out.cells[2].outputs


@pytest.mark.slow
def test_a_cell_past_its_clock_limit_is_stopped_even_before_the_notebook_limit(tmp_path):
    """nbclient's timeout counts only silent time: a kernel that keeps sending never meets it. The
    per-cell clock does (set here below the cell's own timeout, to stand for that kernel)."""
    from kit.execute import SafeExecute

    work = tmp_path / "course" / "autograded" / "s1" / "a1"
    work.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("print('first')"),
        nbformat.v4.new_code_cell("import time\ntime.sleep(600)"),
        nbformat.v4.new_code_cell("print('never')"),
    ]
    run = SafeExecute(timeout=900, cell_wall_timeout=8, notebook_timeout=600)
    start = time.monotonic()
    out, _ = run.preprocess(nb, {"metadata": {"path": os.fspath(work)}})
    took = time.monotonic() - start
    assert took < 300, took  # the cell's clock, not the notebook's 600 s, ended it
    first = "".join(o.get("text", "") for o in out.cells[0].outputs)
    assert "a cell ran past 8 s by the clock: its kernel was stopped" in first, first
    assert not out.cells[2].outputs


def test_the_default_limit_is_every_cell_timeout_plus_startup():
    from kit.execute import SafeExecute

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1"), nbformat.v4.new_markdown_cell("x"), nbformat.v4.new_code_cell("2")]
    assert SafeExecute(timeout=30, startup_timeout=60)._ch13_limit(nb) == 2 * 30 + 60 + 60
    assert SafeExecute(timeout=None)._ch13_limit(nb) == 0  # no per-cell timeout: no guard
    assert SafeExecute(timeout=30, notebook_timeout=9)._ch13_limit(nb) == 9
    # and per cell, by the clock: twice the cell's timeout (the interrupt gets its turn) plus 10 s
    assert SafeExecute(timeout=30)._ch13_cell_limit() == 2 * 30 + 10
    assert SafeExecute(timeout=None)._ch13_cell_limit() == 0
    assert SafeExecute(timeout=30, cell_wall_timeout=7)._ch13_cell_limit() == 7


def test_the_kernel_runs_without_a_heartbeat(tmp_path, monkeypatch):
    """nbclient asks the kernel manager whether the kernel lives; jupyter_client's heartbeat thread
    once held a whole autograde in HBChannel.stop after a flooded kernel's heartbeat broke."""
    from jupyter_client.channels import HBChannel

    from kit.execute import SafeExecute

    started = []
    monkeypatch.setattr(HBChannel, "start", lambda self: started.append(self))
    work = tmp_path / "course" / "autograded" / "s1" / "a1"
    work.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
    out, _ = SafeExecute(timeout=60).preprocess(nb, {"metadata": {"path": os.fspath(work)}})
    assert "".join(o.get("text", "") for o in out.cells[0].outputs) == "42\n"
    assert started == []


def test_a_kernel_without_namespaces_leaves_no_folder_behind(tmp_path, monkeypatch):
    """Tier 3 has no private /tmp: the kernel's home is a folder the kernel manager makes and removes
    with the job (the sandbox's own once stayed in the host's /tmp, one per notebook, with Ray's
    session inside when the notebook started Ray)."""
    from kit.execute import SafeExecute

    monkeypatch.setenv("CH13_SANDBOX_NAMESPACES", "0")
    work = tmp_path / "course" / "autograded" / "s1" / "a1"
    work.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import os, tempfile\nprint(os.environ['CH13_SANDBOX_TIER'], tempfile.gettempdir())")
    ]
    out, _ = SafeExecute(timeout=60).preprocess(nb, {"metadata": {"path": os.fspath(work)}})
    tier, home = "".join(o.get("text", "") for o in out.cells[0].outputs).split()
    assert tier == "limits-only" and os.path.basename(home).startswith("ch13-kernel-")
    assert not os.path.exists(home)
