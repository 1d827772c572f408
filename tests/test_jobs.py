"""kit/jobs.py's memory measure: what the watchdog adds up for one job."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kit.jobs import job_memory, process_memory

MB = 2**20

# 200 MiB written by a parent that then forks: until either writes it again, the child shares every
# page with it (as a subject forked from a zygote shares the harnesses' pages).
FORKED = r"""
import os, sys, time
block = bytearray(b"x") * (200 << 20)
pid = os.fork()
if pid == 0:
    time.sleep(60)
    os._exit(0)
print(os.getpid(), pid, flush=True)
sys.stdin.read()
os.kill(pid, 9)
"""


def test_a_page_shared_by_forked_processes_counts_once():
    proc = subprocess.Popen([sys.executable, "-c", FORKED], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        parent, child = map(int, proc.stdout.readline().split())
        held = job_memory("unused", pids=[parent, child])
        resident = sum(int(open(f"/proc/{p}/statm").read().split()[1]) * 4096 for p in (parent, child))
        assert resident > 400 * MB  # each process's resident set holds the whole block
        assert 200 * MB < held < 280 * MB, held / MB  # the two together hold it once
        assert process_memory(parent) > 100 * MB and process_memory(child) > 100 * MB  # half each
        # a resident sum at or under what the caller asks about settles it; above, the proportional sum.
        # The thresholds sit well clear of both sums: a resident set moves by a page or two between reads.
        roomy = resident + 64 * MB
        assert 400 * MB < job_memory("unused", pids=[parent, child], settled_at=roomy) <= roomy
        assert abs(job_memory("unused", pids=[parent, child], settled_at=300 * MB) - held) < 8 * MB
    finally:
        proc.communicate("", timeout=30)


def test_a_process_that_is_gone_holds_nothing():
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert process_memory(int(proc.stdout)) == 0


def test_a_fork_bomb_that_outran_the_samples_is_named_at_the_last_look():
    """A busy machine may let a fork bomb outrun the watchdog's samples until the kernel's own clock
    ends the cell: before the kill, the watchdog counts the job's processes once more and says so."""
    import os
    import secrets

    from kit.jobs import Watchdog, kill_job

    token = secrets.token_hex(8)
    env = {**os.environ, "CH13_JOB": token}
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env) for _ in range(4)]
    quiet = Watchdog(token, limit_mb=4096, max_processes=8, interval_s=3600)
    bomb = Watchdog(token, limit_mb=4096, max_processes=3, interval_s=3600)  # never samples
    try:
        quiet.start()
        bomb.start()
        assert quiet.last_look() == ""
        assert "more than 3 processes at once" in bomb.last_look()
    finally:
        kill_job(token)
        for p in procs:
            p.wait()


def test_the_sweep_never_runs_as_root_or_as_an_unchanged_uid():
    """kill(-1) as root, or with -1 (setresuid's "unchanged"), would end every process of the machine."""
    from kit.jobs import kill_as

    for uid in (0, -1, None):
        with pytest.raises(ValueError):
            kill_as(uid)
