"""The class runner (kit.classrun): the same scores on local cores and on a Ray cluster of two
nodes on loopback, as a serial plain `nbgrader autograde`; a rerun skips what is graded unless
forced or resubmitted."""

from __future__ import annotations

import os
import time

import pytest

from kit import ASSIGNMENT
from kit.answers import reference_solutions
from kit.classrun import grade_class
from kit.grading import read_verdicts

pytestmark = pytest.mark.slow

WRONG_QUIZ = (
    "q1 = 10.0\nq2 = {'deadlock': 'A', 'livelock': 'B', 'starvation': 'C'}\nq3 = None\n"
    "q4 = {'allreduce': 'root', 'reduce': 'all'}\nq5 = 140.0\n"
)


@pytest.fixture(scope="module")
def students(course):
    refs = reference_solutions()
    answers = {
        "cr_right": {"quiz": refs["quiz"], "amdahl": refs["amdahl"]},
        "cr_wrong": {"quiz": WRONG_QUIZ, "amdahl": "def amdahl_speedup(p, n):\n    return 1 / ((1 - p) + p / n)\n"},
        "cr_half": {"quiz": refs["quiz"], "amdahl": "def amdahl_speedup(p, n):\n    return n\n"},
    }
    for student, cells in answers.items():
        course.submit(student, course.submission_from_answers(cells))
    # a verdicts file in a submission (test_verdicts_beside_each_autograded_notebook): never copied
    with open(course.path("submitted", "cr_half", ASSIGNMENT, "06_quiz.verdicts.json"), "w") as f:
        f.write(PLANTED)
    return sorted(answers)


PLANTED = '{"quiz": {"format": 1, "grade_id": "quiz", "problem": "", "flags": [], "refused": [], "results": []}}'


def scores(course, names):
    return {s: {g: c.score for g, c in course.scores(s).items() if g in ("quiz", "amdahl")} for s in names}


@pytest.fixture(scope="module")
def serial(course, students):
    """The reference: one plain, serial `nbgrader autograde` of these students."""
    proc = course.nbgrader("autograde", ASSIGNMENT, "--force", "--student=cr_*", check=False, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return scores(course, students)


def test_local_cores_match_serial_and_rerun_resumes(course, students, serial):
    runs = grade_class(course, students, force=True, progress=None)
    assert all(r.ok and not r.skipped for r in runs), [r.problems for r in runs]
    assert scores(course, students) == serial
    assert serial["cr_right"] == {"quiz": 10.0, "amdahl": 5.0}
    assert serial["cr_wrong"]["quiz"] == 0.0 and serial["cr_half"]["amdahl"] < 5.0

    again = grade_class(course, students, progress=None)
    assert all(r.skipped for r in again)
    time.sleep(0.05)  # a later submission time than the last grading
    path = course.path("submitted", "cr_half", ASSIGNMENT, "06_quiz.ipynb")
    os.utime(path)
    third = {r.student: r.skipped for r in grade_class(course, students, progress=None)}
    assert third == {"cr_half": False, "cr_right": True, "cr_wrong": True}
    assert scores(course, students) == serial


def test_verdicts_beside_each_autograded_notebook(course, students, serial):
    """`nbgrader autograde` leaves <notebook>.verdicts.json beside each autograded notebook: the same
    scores as the gradebook, the same report as the test cell; a file of that name in the submission
    does not stand in for it; regrading the student (whole, and notebook by notebook as the class runner does
    after a preflight problem) replaces it; the feedback does not carry it."""

    def check(student):
        folder = course.path("autograded", student, ASSIGNMENT)
        verdicts = read_verdicts(os.path.join(folder, "06_quiz.verdicts.json"))
        cells = course.scores(student)
        assert list(verdicts) == ["quiz", "amdahl"]
        for gid, v in verdicts.items():
            assert v.score == cells[gid].score and v.report() + "\n" == cells[gid].report
        assert [n for n in os.listdir(folder) if n.endswith(".json")] == ["06_quiz.verdicts.json"]  # no temporary
        return {gid: v.to_json() for gid, v in verdicts.items()}

    first = {s: check(s) for s in students}
    assert {gid: v["score"] for gid, v in first["cr_right"].items()} == {"quiz": 10.0, "amdahl": 5.0}
    for argv in ([], ["--notebook=06_quiz"]):  # the second finds the first's file (read-only) in place
        proc = course.nbgrader("autograde", ASSIGNMENT, "--force", "--student=cr_half", *argv, check=False, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert check("cr_half") == first["cr_half"]
    course.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--student=cr_half")
    feedback = course.path("feedback", "cr_half", ASSIGNMENT)
    assert "06_quiz.html" in os.listdir(feedback)
    assert not [n for n in os.listdir(feedback) if n.endswith(".json")]


@pytest.mark.deep  # the class graded a third time, on a cluster it starts: make test-deep
def test_ray_cluster_of_two_nodes_matches_serial(course, students, serial):
    os.environ.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    import ray
    from ray.cluster_utils import Cluster

    assert not ray.is_initialized()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        runs = grade_class(course, students, force=True, progress=None, ray_address=cluster.address)
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert all(r.ok for r in runs), [r.problems for r in runs]
    assert all(r.node and r.node != "local" for r in runs)
    assert scores(course, students) == serial


BURNER = '''
import os, time
# Keeps every core busy for 20 s from the kernel (no audit hook there), then answers honestly.
children = []
for _ in range(os.cpu_count() or 1):
    pid = os.fork()
    if pid == 0:
        end = time.monotonic() + 20
        while time.monotonic() < end:
            pass
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
'''


def test_a_cpu_burner_does_not_cost_honest_students_their_grade(course):
    """Honest students graded beside a kernel that burns every core keep their full marks: the
    subject's hang guard counts its own CPU time, not the wall clock the burner stretches."""
    import nbformat

    refs = reference_solutions()
    honest = {"quiz": refs["quiz"], "amdahl": refs["amdahl"]}
    names = ["cb_burner", "cb_honest_1", "cb_honest_2", "cb_honest_3"]
    for name in names:
        notebooks = course.submission_from_answers(honest)
        if name == "cb_burner":
            nb = notebooks["06_quiz"]
            nb.cells.insert(1, nbformat.v4.new_code_cell(BURNER))
        course.submit(name, notebooks)
    runs = grade_class(course, names, force=True, progress=None)
    assert all(r.ok for r in runs), [r.problems for r in runs]
    got = scores(course, names)
    for name in names[1:]:
        assert got[name] == {"quiz": 10.0, "amdahl": 5.0}, (name, got)
