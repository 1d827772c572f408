"""kit/landlock.py: the allow-list of tiers 2 and 3, tried in a child process (Landlock is for good)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kit import landlock

pytestmark = pytest.mark.skipif(landlock.abi() == 0, reason="no Landlock in this kernel")

# The child restricts itself, then reports what it could still do; its own children are in its domain.
CHILD = r"""
import ctypes, json, os, sys, time
from kit import landlock
ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, as kit.sandbox.drop_privileges sets it
base, parent = sys.argv[1], int(sys.argv[2])
landlock.restrict(read=[base + "/kit", sys.prefix, sys.base_prefix, "/usr", "/lib", "/lib64", "/etc", "/proc"],
                  write=[base + "/own"], listing=[base])
def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return type(e).__name__
seen = {
    "read_kit": attempt(lambda: open(base + "/kit/code.py").read()),
    "write_kit": attempt(lambda: open(base + "/kit/code.py", "a").write("forged")),
    "read_hidden": attempt(lambda: open(base + "/graders/secret").read()),
    "list_hidden": attempt(lambda: os.listdir(base + "/graders")),
    "stat_hidden": attempt(lambda: os.stat(base + "/graders/secret")),
    "read_other": attempt(lambda: open(base + "/other/answers").read()),
    "write_own": attempt(lambda: open(base + "/own/new", "w").write("mine")),
    "mkdir_own": attempt(lambda: os.mkdir(base + "/own/sub")),
    "signal_parent": attempt(lambda: os.kill(parent, 0)),
}
import subprocess
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
seen["signal_own_child"] = attempt(lambda: os.kill(child.pid, 9))
child.wait()
print(json.dumps(seen))
"""


@pytest.fixture
def tree(tmp_path):
    for folder, name, text in [("kit", "code.py", "x = 1"), ("graders", "secret", "42"), ("other", "answers", "B")]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text)
    (tmp_path / "own").mkdir()
    return tmp_path


def test_a_restricted_job_reaches_only_its_allow_list(tree):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), str(os.getpid())], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["read_kit"] == "ok" and seen["write_kit"] == "PermissionError"  # read-only, though we own it
    assert seen["read_hidden"] == "PermissionError" and seen["read_other"] == "PermissionError"
    # what Landlock does not hide (docs/sandbox.md): a listed folder's names, a file's metadata
    assert seen["list_hidden"] == "ok" and seen["stat_hidden"] == "ok"
    assert seen["write_own"] == "ok" and seen["mkdir_own"] == "ok"
    assert (tree / "own" / "new").read_text() == "mine" and (tree / "kit" / "code.py").read_text() == "x = 1"
    if landlock.abi() >= 6:  # scoped: no signal leaves the job's domain, its own children still get theirs
        assert seen["signal_parent"] == "PermissionError"
    assert seen["signal_own_child"] == "ok"


def test_handled_rights_follow_the_abi():
    assert landlock.handled(1) == landlock.ABI1_ALL
    assert landlock.handled(3) & landlock.TRUNCATE and not landlock.handled(3) & landlock.IOCTL_DEV
    assert landlock.handled(5) & landlock.IOCTL_DEV and landlock.handled(2) & landlock.REFER
