"""Judges forked from a warm zygote (kit/judges.py) grade exactly as exec'd ones, and stop when told.

Fast: the counter's grader imports nothing heavy, and its subject is unsandboxed here."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from kit import judges
from kit.answers import reference
from kit.grading import grade_cell, judge_env
from kit.jobs import job_pids, kill_job, new_token

WRONG = """
import threading

class Counter:
    def __init__(self):
        self.value = 0

    def increment(self):
        v = self.value
        self.value = v + 1

def count_with_threads(n_threads, n_increments):
    c = Counter()
    ts = [threading.Thread(target=lambda: [c.increment() for _ in range(n_increments)]) for _ in range(n_threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return c.value
"""

HANG = "import time\nwhile True:\n    time.sleep(1)\n"


@pytest.mark.parametrize("source", [reference("counter"), WRONG, "def broken(:\n"], ids=["right", "wrong", "syntax"])
def test_a_forked_judge_grades_as_an_execed_one(monkeypatch, source):
    forked = grade_cell("counter", source, sandbox=False).to_json()
    assert judges._ctl is not None and not judges._broken, "the zygote did not serve this judge"
    monkeypatch.setenv("CH13_JUDGE_LAUNCH", "exec")
    assert grade_cell("counter", source, sandbox=False).to_json() == forked


def test_the_verdicts_are_the_judges_and_the_wrong_answer_fails():
    right = grade_cell("counter", reference("counter"), sandbox=False)
    wrong = grade_cell("counter", WRONG, sandbox=False)
    assert right.score == right.max_score > 0 and wrong.score < wrong.max_score, (right.report(), wrong.report())


def test_a_forked_judge_that_outlives_its_wait_is_killed_with_its_session(tmp_path):
    answer, results, log = tmp_path / "answer.py", tmp_path / "results.jsonl", tmp_path / "log"
    answer.write_text(HANG)
    token = new_token()
    env = {**os.environ, "PYTHONHASHSEED": "0", "TMPDIR": str(tmp_path), "CH13_JOB": token}
    judge = judges.start(
        ["counter", str(answer), str(results), "--no-sandbox", "--budget", "60"],
        env=env,
        cwd=os.getcwd(),
        log=str(log),
        key=b"k" * 32,
    )
    with pytest.raises(subprocess.TimeoutExpired):
        judge.wait(timeout=1.0)
    started = time.time()
    judge.kill()
    assert judge.wait(timeout=30) == -9 and time.time() - started < 30
    with pytest.raises(ProcessLookupError):
        os.killpg(judge.pid, 0)  # nothing of its session is left
    kill_job(token)  # and its subject, found by its token, as kit/grading.py does
    assert job_pids(token) == []


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "execd"])
def test_kill_never_aims_at_a_pid_the_judge_no_longer_holds(tmp_path, monkeypatch, fork):
    """A judge that ended by itself (and was reaped: by the zygote, or by Popen.poll) is not signalled
    by its number: that pid may be another process's by then. kill() goes through a pidfd or an
    unreaped Popen, so it cannot reach anything else."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "TMPDIR": str(tmp_path), "CH13_JOB": new_token()}
    argv = ["no_such_grader", str(tmp_path / "a.py"), str(tmp_path / "r.jsonl"), "--no-sandbox"]
    judge = judges.start(argv, env=env, cwd=os.getcwd(), log=str(tmp_path / "log"), key=b"k" * 32, fork=fork)
    deadline = time.time() + 60
    while time.time() < deadline:  # ends by itself (an unknown grader), reaped by its parent
        try:
            os.kill(judge.pid, 0)
        except ProcessLookupError:
            break
        if not fork and judge._popen.poll() is not None:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the judge did not end by itself")

    def by_number(*args):
        raise AssertionError(f"signalled by pid: {args}")

    monkeypatch.setattr(os, "killpg", by_number)
    monkeypatch.setattr(os, "kill", by_number)
    judge.kill()  # ESRCH through the pidfd, or a Popen that knows its child is gone: nothing sent
    monkeypatch.undo()
    assert judge.wait(timeout=30) != 0
    judge.kill()  # after wait: a no-op


def test_a_shared_zygote_ends_one_students_judges_only(tmp_path):
    """The class runner's students share one zygote (judges.share/adopt): when one student's
    autograde ends, its judges still running are killed, the other student's are not."""
    answer = tmp_path / "answer.py"
    answer.write_text(HANG)
    assert judges.share(judge_env()) is not None
    started = {}
    for student in ("ada", "ben"):
        token = new_token()
        env = {**os.environ, "PYTHONHASHSEED": "0", "TMPDIR": str(tmp_path), "CH13_JOB": token}
        env["CH13_JOB_STUDENT"] = f"student-{student}"
        argv = ["counter", str(answer), str(tmp_path / f"{student}.jsonl"), "--no-sandbox", "--budget", "60"]
        judge = judges.start(argv, env=env, cwd=os.getcwd(), log=str(tmp_path / student), key=b"k" * 32)
        started[student] = (judge, token)
    judges.end_student("student-ada")
    ada, ben = started["ada"][0], started["ben"][0]
    assert ada.wait(timeout=30) == -9
    with pytest.raises(subprocess.TimeoutExpired):
        ben.wait(timeout=1.0)
    judges.end_student("student-ben")
    assert ben.wait(timeout=30) == -9
    for _, token in started.values():
        kill_job(token)  # their subjects, found by their tokens
        assert job_pids(token) == []


def _adopt_and_grade(zygotes, out: str) -> None:
    """In a process started as the class runner starts a student's nbgrader (kit/launch.py)."""
    judges.adopt(zygotes)
    verdict = grade_cell("counter", reference("counter"), sandbox=False)
    with open(out, "w") as f:
        f.write(f"{verdict.score} {judges._broken}")


@pytest.mark.slow
def test_a_students_process_forks_its_judges_from_the_class_zygote(tmp_path, monkeypatch):
    """The class runner's environment (nbgrader's, not a grading's) must still give a zygote that
    forks: one that imported torch with several OpenMP threads refused every fork, silently."""
    from kit import launch
    from kit.course import nbgrader_env

    for name, fresh in (("_ctl", None), ("_subjects", None), ("_broken", False)):
        monkeypatch.setattr(judges, name, fresh)  # a zygote pair of its own, started here
    zygotes = judges.share(nbgrader_env())
    judges.warm(["all_reduce", "counter"], env=nbgrader_env(), subjects=True)  # torch, in both
    out = tmp_path / "out"
    proc = launch._Process(target=_adopt_and_grade, args=(zygotes, str(out)))
    proc.start()
    proc.join(120)
    for sock in zygotes:
        if sock is not None:
            sock.close()  # ends that pair
    assert out.read_text() == "10.0 False"  # full marks, and no judge fell back to exec


def test_warming_imports_graders_without_grading(tmp_path):
    judges.warm(["counter", "no_such_grader"], env=dict(os.environ))
    # the zygote keeps serving after a grader it could not import
    assert grade_cell("counter", reference("counter"), sandbox=False).score == 10


def test_a_grader_no_one_warmed_is_imported_for_the_next_judges(monkeypatch):
    """The tests' collector and grade_cell called alone warm nothing: the first judge of a grader
    imports it (torch: ~1.5 CPU-s), and the zygote then imports it too, for the judges after it."""
    for name, fresh in (("_ctl", None), ("_subjects", None), ("_broken", False)):
        monkeypatch.setattr(judges, name, fresh)  # a zygote pair of this test's own
    verdict = grade_cell("ddp_average", "def average_gradients(:\n", sandbox=False)  # loads the grader, runs nothing
    assert verdict.score == 0 and "line 1" in verdict.results[0].message
    maps = f"/proc/{_newest_zygote()}/maps"
    for _ in range(600):  # at most a minute: the zygote imports between requests, when idle
        with open(maps) as f:
            if "libtorch" in f.read():
                break
        time.sleep(0.1)
    else:
        raise AssertionError("the zygote never imported ddp_average's grader (no libtorch mapped)")
    judges._ctl.close()  # ends this pair


def _newest_zygote() -> int:
    found = []  # (start time, pid) of our children that are judge zygotes
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and b"kit.judges" in cmdline:
                found.append((int(fields[19]), int(entry)))
    assert found, "no zygote among our children"
    return max(found)[1]


def test_a_dead_zygote_costs_no_grade(monkeypatch, tmp_path):
    """Killed (by a TA's kill, or by a job of the same uid in the weaker tiers): the judges it
    forked are waited for as processes, and later judges are exec'd."""
    monkeypatch.setattr(judges, "_ctl", None)  # a zygote of this test's own
    monkeypatch.setattr(judges, "_broken", False)
    answer, log = tmp_path / "answer.py", tmp_path / "log"
    answer.write_text(HANG)
    token = new_token()
    env = {**os.environ, "PYTHONHASHSEED": "0", "TMPDIR": str(tmp_path), "CH13_JOB": token}
    argv = ["counter", str(answer), str(tmp_path / "results"), "--no-sandbox", "--budget", "60"]
    judge = judges.start(argv, env=env, cwd=os.getcwd(), log=str(log), key=b"k" * 32)
    os.kill(_newest_zygote(), 9)
    with pytest.raises(subprocess.TimeoutExpired):
        judge.wait(timeout=1.0)  # the judge outlives its zygote
    judge.kill()
    assert judge.wait(timeout=30) == 0  # gone; its status went with the zygote
    kill_job(token)
    verdict = grade_cell("counter", reference("counter"), sandbox=False)
    assert judges._broken and verdict.score == verdict.max_score, verdict.report()
    judges._ctl.close()


PEEK = (
    reference("ddp_average")
    + """

_average = average_gradients


def average_gradients(model):  # right, unless Ray (which only the zygote preloads here) is there
    import sys

    _average(model)
    if "ray" in sys.modules:
        for p in model.parameters():
            if p.grad is not None:
                p.grad += 1
"""
)
# A light subject's probe: amdahl's cell has no allow-list (notebook 01's would refuse `import sys`)
LIGHT_PEEK = (
    reference("amdahl")
    + """

_speedup = amdahl_speedup


def amdahl_speedup(p, n):  # right, unless torch is there
    import sys

    return _speedup(p, n) + (1000.0 if "torch" in sys.modules else 0.0)
"""
)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="subjects are forked from a zygote in the root tier only")
def test_heavy_subjects_are_forked_from_a_zygote_holding_every_heavy_harness(monkeypatch):
    """Subjects whose harness imports torch or Ray fork from the zygote, which holds all of those
    harnesses: a ddp_average subject (torch and a real gloo world; the cheapest heavy grader, where
    all_reduce's relayed worlds took 75 s under the suite's load) finds Ray there. The same
    verdicts otherwise."""
    forked = grade_cell("ddp_average", reference("ddp_average"))
    peek_forked = grade_cell("ddp_average", PEEK)
    light = grade_cell("amdahl", LIGHT_PEEK)
    monkeypatch.setenv("CH13_JUDGE_LAUNCH", "exec")
    execed = grade_cell("ddp_average", reference("ddp_average"))
    assert execed.to_json() == forked.to_json(), f"exec'd:\n{execed.report()}\nforked:\n{forked.report()}"
    assert forked.score == forked.max_score, forked.report()
    peek_execed = grade_cell("ddp_average", PEEK)
    assert peek_execed.score == forked.max_score, peek_execed.report()
    assert peek_forked.score < forked.max_score, "the subject was exec'd: the zygote did not serve it"
    assert light.score == light.max_score, "a light subject (amdahl's) was forked: " + light.report()
