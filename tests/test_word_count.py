"""Direct tests of the word_count grader (Ray MapReduce): the stub is reported as not implemented,
the public self-check tells right from wrong, replays fail when pasted, and grading leaves nothing
running. Every catalogue answer and the notebook's reference are graded, as autograde grades them,
by tests/test_catalogues.py and tests/test_pipeline.py.

Each grading runs the cell in its own subject process (kit/subject.py, unsandboxed here), which
starts one Ray cluster for all the tests of that grading; the judge (this process) runs no Ray.
The self-check tests run Ray in this process, as a notebook does. Files whose wrong solution makes
a barrier wait out its hang guard are marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from graders._catalogue import source as catalogue_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def grader():
    from graders import load_grader

    return load_grader("word_count")


@pytest.fixture(scope="module")
def cluster():
    """One Ray cluster in this process for the self-check tests (as in a notebook's kernel)."""
    yield
    from ch13lib.mapreduce import stop_local_ray

    stop_local_ray()


def grade(grader, source: str):
    return list(grader.run(source, sandbox=False))


def reference_source() -> str:
    from kit.answers import reference

    return reference("word_count")


def stub_source() -> str:
    """The release's version of the answer cell: each solution region becomes a stub."""
    from kit.answers import stub

    return stub("word_count")


# The catalogue itself is graded once, for every grade_id, by tests/test_catalogues.py.


# The notebook's reference solutions (full marks) and its untouched stubs ("not implemented yet" from
# every test) are graded through plain `nbgrader autograde` by tests/test_pipeline.py, and every
# catalogue answer once by tests/test_catalogues.py: not again here.


def test_crash_schedule_is_fixed_and_kills_after_output():
    from graders import word_count as wc

    first, second = wc._schedule(), wc._schedule()
    assert first == second
    deaths = [(m, r) for _, _, _, m, r in first for f in (m, r) for t, (a, _) in f.items() if a == "exit"]
    raises = [1 for _, _, _, m, r in first for f in (m, r) for t, (a, _) in f.items() if a == "raise"]
    assert len(deaths) >= 4 and raises
    for _, _, _, map_faults, _ in first:
        for record, (_, after) in map_faults.items():
            assert 0 < after < len(record.split()), "a map death must come after some output"


def run_self_check(source: str, capsys) -> tuple[bool, str]:
    from ch13lib.mapreduce import self_check

    namespace = {"__name__": "notebook_namespace"}
    exec(compile(source, "<notebook cell>", "exec"), namespace)
    ok = self_check(namespace)
    return ok, capsys.readouterr().out


@pytest.mark.slow
def test_self_check_passes_reference(cluster, capsys):
    ok, out = run_self_check(reference_source(), capsys)
    assert ok, out
    assert "✘" not in out and out.count("✔") >= 8


@pytest.mark.slow
def test_self_check_reports_stub_and_wrong(cluster, capsys):
    ok, out = run_self_check(stub_source(), capsys)
    assert not ok and "not implemented yet" in out
    ok, out = run_self_check(catalogue_source("word_count", "wrong_builtin_hash"), capsys)
    assert not ok and "✘ partition gives the same answer" in out and "stable hash" in out
    ok, out = run_self_check(catalogue_source("word_count", "wrong_no_retries"), capsys)
    assert not ok and "WorkerCrashedError" in out
    ok, out = run_self_check(catalogue_source("word_count", "wrong_streaming_double_count"), capsys)
    assert not ok and "✘ a worker killed after emitting 2 pairs" in out


@pytest.mark.slow
def test_a_crash_runs_replay_fails_when_pasted(cluster, capsys):
    """The replay a crash run's failure ends with (``check_run`` with its fault schedule), run after
    the cell as in the notebook: the same run on the checking harness, the grader's own sentence.
    The whole catalogue's replays: tests/test_catalogues.py (deep)."""
    from graders import word_count as wc

    _, n_map, n_reduce, map_faults, reduce_faults = wc._schedule()[0]
    replay = wc._check_replay(
        wc.CRASH_CORPUS, n_map, n_reduce, map_faults=map_faults, reduce_faults=reduce_faults, weighted=True
    )
    said = {}
    for name in ("wrong_no_retries", "right_reference"):
        namespace = {"__name__": "notebook_namespace"}
        exec(compile(catalogue_source("word_count", name), "<notebook cell>", "exec"), namespace)
        *lines, call = replay.splitlines()
        exec("\n".join(lines), namespace)
        said[name] = (eval(call, namespace), capsys.readouterr().out)
    assert said["right_reference"][0] is True, said["right_reference"][1]
    passed, out = said["wrong_no_retries"]
    assert passed is False and "run_mapreduce on 10 records with n_map=4, n_reduce=2" in out.split("✘ ", 1)[1], out
    assert "a map worker dies: run_mapreduce gave up when a worker died" in out, out


@pytest.mark.deep  # every test of the grader on one answer (the catalogue's deep pass grades it too)
def test_grading_reaps_the_actors_a_run_leaves_behind(grader):
    """The streaming entry's map task closes over its reducer actors, so they outlive every run;
    unreaped, ~30 runs left ~65 idle worker processes (~1,300 threads, past the sandbox's
    RLIMIT_NPROC) and grading hung. Asked of the subject that ran every test, before it closes."""
    from graders.api import Answer, run_test

    source = catalogue_source("word_count", "wrong_streaming_double_count")
    subject = grader.subject(source, sandbox=False)
    answer = Answer("word_count", source, subject)
    try:
        results = {t.name: run_test(t, answer) for t in grader.tests}
        assert not results["survives_crashes"].passed and "counts too high" in results["survives_crashes"].message
        assert results["run_mapreduce_counts"].passed
        assert subject.starts == 1  # one subject, so one Ray cluster, for every test
        assert answer.run("kit.harnesses.mapreduce_probe:live_actor_ids") == []
        assert answer.run("kit.harnesses.mapreduce_probe:stop") > 0  # as the grader's last request
    finally:
        subject.close()


def _last_line_of(code: str, timeout: float) -> str:
    """The last line a fresh `python -c code` in the repository prints; it must exit 0."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-1000:] + out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_judge_runs_no_ray():
    """The grader process imports neither Ray nor the probes: they run in the subject."""
    code = (
        "import sys\n"
        "from graders import load_grader\n"
        "load_grader('word_count')\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ch13lib.mapreduce')))\n"
    )
    assert _last_line_of(code, timeout=120) == "[]"


# A salted partition that, in the fresh process with PYTHONHASHSEED=1 only, asks for what the guards refuse.
SALTED = (
    "import os\n\n\n"
    "def partition(key, n_reduce):\n"
    "    if os.environ.get('PYTHONHASHSEED') == '1':\n"
    "        import gc\n"
    "    return hash(key) % n_reduce\n"
)
KEYS = [f"w{i}" for i in range(20)]


def test_the_fresh_partition_processes_run_the_cell_under_the_subjects_guards(grader):
    """partition_elsewhere starts each fresh process with the command the subject handed over
    (kit.subject.Trusted.child): the cell runs there under the subject's own guards, and what they
    refused comes back beside the table."""
    subject = grader.subject(SALTED, sandbox=False)
    try:
        one, two = subject.request(
            "run", "kit.harnesses.mapreduce_probe:partition_elsewhere", [KEYS, [7], [1, 2]]
        ).value
        assert "table" not in one and "PermissionError" in one["error"], one
        assert [r.split(" (")[0] for r in one["refused"]] == ["import gc"] and one["tampered"] == [], one
        assert two["refused"] == two["tampered"] == [] and "error" not in two, two
        assert sorted({row[0] for row in two["table"]}) != [two["table"][0][0]]  # a real table, salted
        subject.request("run", "kit.harnesses.mapreduce_probe:stop")
    finally:
        subject.close()


# A cell that plants its own `kit` and a sitecustomize where a fresh interpreter would look first: on
# a PYTHONPATH it sets, and in its working folder. The sitecustomize ends only the partition child
# (its command line names partition_rows): Ray's processes, which the subject starts with the
# cell's environment, run on.
PLANTS_ITS_OWN_KIT = """
import os, tempfile

FAKE = 'import json\\ndef child(argv):\\n    print(json.dumps({"ok": [["forged"]]}))\\n'
SITE = 'import sys\\nif any("partition_rows" in a for a in sys.argv[1:]):\\n    raise SystemExit\\n'
for folder in (tempfile.mkdtemp(), os.getcwd()):
    os.makedirs(os.path.join(folder, "kit"), exist_ok=True)
    for name, text in [("kit/__init__.py", ""), ("kit/subject.py", FAKE), ("sitecustomize.py", SITE)]:
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    os.environ["PYTHONPATH"] = folder + os.pathsep + os.environ.get("PYTHONPATH", "")
"""


def test_the_fresh_partition_process_is_not_found_where_the_cell_chose(grader):
    """The guarded child starts from the subject's environment as it was before the cell ran, and
    without the working folder on its path: a `kit` or sitecustomize the cell planted runs nowhere."""
    subject = grader.subject(PLANTS_ITS_OWN_KIT + SALTED, sandbox=False)
    try:
        assert subject.request("load").tampered == []
        one, two = subject.request(
            "run", "kit.harnesses.mapreduce_probe:partition_elsewhere", [KEYS, [7], [1, 2]]
        ).value
        assert [r.split(" (")[0] for r in one["refused"]] == ["import gc"], one  # the real guards ran
        assert "forged" not in json.dumps(two["table"]), two
        subject.request("run", "kit.harnesses.mapreduce_probe:stop")
    finally:
        subject.close()


def test_what_the_subject_handed_over_is_out_of_the_cells_reach(grader):
    """The guards the subject hands the harness (kit.subject.Trusted) are kept in kit/harnesses/,
    which a cell cannot import: the cell that reaches for them to swap them is refused."""
    reach = "try:\n    import kit.harnesses.mapreduce_probe as h\n\n    h._trusted = None\n"
    reach += "except PermissionError:\n    pass\n"
    subject = grader.subject(reach + SALTED, sandbox=False)
    try:
        loaded = subject.request("load")
        assert [r.split(" (")[0] for r in loaded.refused] == ["import kit.harnesses.mapreduce_probe"], loaded
        assert loaded.tampered == [], loaded
    finally:
        subject.close()


def test_a_fresh_partition_process_in_the_sandbox_with_no_guard_runs_nothing():
    """Fail closed: with no guard handed over (no subject), the fresh process runs the cell as it is
    outside the grading sandbox, and nothing inside it (no_new_privs, here set by hand)."""
    code = (
        "import ctypes, json, types\n"
        "import kit\n"
        "kit.source_ch13lib()\n"
        "from kit.harnesses import mapreduce_probe as probe\n"
        "probe._warm = lambda: None  # no Ray: the fresh processes are what is asked\n"
        "cell = types.SimpleNamespace(source=%r, grade_id='word_count')\n"
        "outside = probe.partition_elsewhere(cell, ['a', 'b'], [1], [3])\n"
        "assert ctypes.CDLL(None).prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS, as kit.sandbox sets it\n"
        "print(json.dumps([outside, probe.partition_elsewhere(cell, ['a', 'b'], [1], [3])]))\n"
    ) % SALTED
    outside, inside = json.loads(_last_line_of(code, timeout=120))
    assert outside == [{"table": [[0], [0]], "refused": [], "tampered": []}], outside
    assert "table" not in inside[0] and "was handed no guard by the grading process" in inside[0]["error"], inside


def test_self_check_stands_aside_while_grading(monkeypatch, capsys):
    from ch13lib.mapreduce import self_check

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert self_check({}) is True
    assert len(capsys.readouterr().out.strip().splitlines()) == 1


RAY_START_FLAKES = """
import os, subprocess, sys
import ray
from ch13lib import mapreduce

calls, left = [], []
def init(**kwargs):  # Ray's own failure on a loaded machine, the first N times, leaving a process
    calls.append(kwargs["_temp_dir"])
    if len(calls) <= int(sys.argv[1]):
        # A helper that lives on (as Ray's raylet does) and is running, its command line naming the
        # session folder, before the start fails (not caught between exec and its first line).
        stays = "import time; print(flush=True); time.sleep(600)"
        helper = [sys.executable, "-S", "-c", stays, "--log_dir=" + kwargs["_temp_dir"] + "/session_x"]
        left.append(subprocess.Popen(helper, stdout=subprocess.PIPE))
        left[-1].stdout.readline()
        raise Exception("The current node timed out during startup. This could happen because ...")
ray.init = init
try:
    mapreduce.start_local_ray()
    print("started", len(calls), end=" ")
except mapreduce.RayDidNotStart as e:
    print("gave up", len(calls), e, end=" ")
print("left running", [p.poll() is None for p in left], "folders", [os.path.exists(d) for d in calls])
"""


@pytest.mark.parametrize(
    "fails,says",
    [
        (0, "started 1 left running [] folders [True]"),
        (2, "started 3 left running [False, False] folders [False, False, True]"),
        (
            3,
            "gave up 3 Ray did not start (3 tries; the last said: The current node timed out during startup. "
            "This could happen because ...). This is the machine's fault (overloaded?), not your code's: run the "
            "cell again (a TA grades a graded cell again). left running [False, False, False] folders "
            "[False, False, False]",
        ),
    ],
)
def test_a_ray_start_that_times_out_is_tried_again_and_then_blamed_on_the_machine(fails, says):
    """Ray waits a fixed 30 s for its raylet; under CI's load it once missed that, and a right answer
    lost run_mapreduce_counts to "run_mapreduce raised Exception". Each try is a fresh cluster; what
    a failed try left running is killed and its folder removed; the last failure says whose fault."""
    # in English: the sentence compared is the English one (ch13lib/lang.py)
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "source", "ch13_04"), "CH13_LANG": "en"}
    done = subprocess.run(
        [sys.executable, "-c", RAY_START_FLAKES, str(fails)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == says


def test_a_driver_that_ends_without_stopping_ray_leaves_no_folder():
    """A student's kernel (or a self-check run) that ends without stop_local_ray: Ray's own exit
    handler, which runs after ch13lib's, wrote an empty session folder again after it was removed
    (20 left in /tmp by each run of the suite's self-check measure)."""
    code = (
        "from ch13lib import mapreduce as m\n"
        "ray = m.start_local_ray()\n"
        "assert ray.get(ray.remote(lambda: 6 * 7).remote()) == 42\n"
        "print(m._temp_dir)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "source", "ch13_04")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = done.stdout.strip().splitlines()[-1]
    assert os.path.basename(folder).startswith("ch13ray-")
    assert not os.path.exists(folder), sorted(os.listdir(folder))


def test_folders_of_killed_drivers_are_swept_at_the_next_start(tmp_path):
    """A kernel killed before its exit handler ran (restarted, or stopped past its time limit)
    leaves its ch13ray- folder: the next start removes such folders once they are old and no driver
    of theirs is alive, and keeps every folder whose driver still runs, however old."""
    from ch13lib import mapreduce as m

    gone = _a_dead_pid()
    old = time.time() - 2 * m.STALE_AFTER_S

    def folder(name, pid, age_s=None):
        path = tmp_path / name
        (path / "sockets").mkdir(parents=True)
        if pid is not None:
            (path / f"session_2026-12-04_09-27-21_033242_{pid}").mkdir()
        if age_s is not None:
            os.utime(path, (age_s, age_s))
        return path

    killed = folder("ch13ray-killed", gone, old)
    failed_start = folder("ch13ray-nosession", None, old)
    running = folder("ch13ray-running", os.getpid(), old)
    young = folder("ch13ray-young", gone)
    other = folder("ray-other", gone, old)
    assert sorted(m.sweep_stale(str(tmp_path))) == sorted([str(killed), str(failed_start)])
    assert [p.exists() for p in (killed, failed_start, running, young, other)] == [False, False, True, True, True]


def _a_dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


LEAN_HEAD = r"""
import os, subprocess
from ray._private import node, parameter
before = (parameter.RayParams.__init__, node.Node.start_api_server)
from ch13lib import mapreduce as m
ray = m.start_local_ray()
assert ray.get(ray.remote(lambda: 6 * 7).remote()) == 42


def tree(pid):
    kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(pid)] + [p for k in kids for p in tree(k)]


cmdlines = []
for pid in tree(os.getpid())[1:]:  # not this process: its command line is this text
    try:
        cmdlines.append(open(f"/proc/{pid}/cmdline").read().replace("\0", " "))
    except OSError:
        pass
print(sorted(s for s in ("monitor.py", "log_monitor.py", "dashboard.py", "raylet") if any(s in c for c in cmdlines)))
print((parameter.RayParams.__init__, node.Node.start_api_server) == before)
m.stop_local_ray()
"""


def test_the_local_cluster_starts_only_what_it_uses():
    """No autoscaler monitor, log monitor or dashboard API server (~1.7 of a start's ~4.6 CPU-s):
    the cluster is one machine and logs stay with the workers. Ray's own classes are as they were
    afterwards, so a student's own ray.init gets Ray's defaults."""
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "source", "ch13_04")}
    done = subprocess.run([sys.executable, "-c", LEAN_HEAD], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[-3:] == ["['raylet']", "True", ""], done.stdout
