"""kit.launch runs `nbgrader <args>` forked from a server that imported nbgrader once: the same
exit status, output, working directory and environment as `python -m nbgrader`, and a hang is
killed at the timeout."""

from __future__ import annotations

import os
import time

import pytest

from kit.course import nbgrader_env
from kit.launch import run_nbgrader

MODES = ["fork", "exec"]


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    monkeypatch.setenv("CH13_LAUNCH", request.param)
    return request.param


def test_version_and_exit_status(mode, tmp_path):
    env = nbgrader_env()
    done = run_nbgrader(["--version"], cwd=str(tmp_path), env=env, timeout=120)
    assert (done.returncode, done.timed_out) == (0, False)
    import nbgrader

    assert nbgrader.__version__ in done.log
    bad = run_nbgrader(["autograde", "no_such_assignment", "--student=nobody"], cwd=str(tmp_path), env=env, timeout=120)
    assert bad.returncode not in (0, None) and not bad.timed_out


def test_child_sees_the_given_cwd_env_and_config(mode, tmp_path):
    """nbgrader reads nbgrader_config.py from the working directory; the config (run by the
    child) records what it sees."""
    seen = tmp_path / "seen.txt"
    (tmp_path / "nbgrader_config.py").write_text(
        "import os, sys\n"
        f"open({str(seen)!r}, 'w').write(os.getcwd() + '|' + os.environ.get('CH13_PROBE', '') + '|'\n"
        "    + str(sys.stdin.read() == ''))\n"
    )
    env = dict(nbgrader_env(), CH13_PROBE="given")
    done = run_nbgrader(["db", "student", "list"], cwd=str(tmp_path), env=env, timeout=120)
    assert done.returncode == 0, done.log
    cwd, probe, stdin_empty = seen.read_text().split("|")
    assert (os.path.realpath(cwd), probe, stdin_empty) == (os.path.realpath(tmp_path), "given", "True")


def test_a_hang_is_killed_at_the_timeout(mode, tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(
        f"import os, time\nopen({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
    )
    start = time.monotonic()
    done = run_nbgrader(["autograde", "x"], cwd=str(tmp_path), env=nbgrader_env(), timeout=5)
    assert done.timed_out and done.returncode is None
    assert time.monotonic() - start < 120
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
