"""Does the GPU runner skip cleanly here, and is every check ready for a GPU machine?"""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

from gpu.__main__ import gpu_present
from kit import ROOT

CHECKS = sorted(glob.glob(os.path.join(ROOT, "gpu", "check_*.py")))


@pytest.mark.skipif(bool(gpu_present()), reason="a GPU is present: `python -m gpu` runs for real there")
def test_gpu_runner_says_no_gpu_and_exits_0():
    out = subprocess.run([sys.executable, "-m", "gpu"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("no GPU: skipped")
    for check in CHECKS:
        assert os.path.basename(check)[6:-3] in out.stdout


@pytest.mark.skipif(bool(gpu_present()), reason="a GPU is present")
@pytest.mark.parametrize("check", CHECKS, ids=os.path.basename)
def test_each_gpu_check_skips_cleanly_without_a_gpu(check):
    env = dict(os.environ, PYTHONPATH=ROOT, CH13_DEVICE="gpu")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    out = subprocess.run([sys.executable, check], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no GPU: skipped" in out.stdout


def test_every_exercise_with_a_gpu_path_has_a_check():
    names = {os.path.basename(c)[6:-3] for c in CHECKS}
    for grade_id in ("vec_add", "all_reduce", "fsdp_checkpoint"):
        if os.path.exists(os.path.join(ROOT, "graders", f"{grade_id}.py")):
            assert grade_id in names, f"gpu/check_{grade_id}.py is missing"
