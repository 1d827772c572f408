"""The red-team corpus (tests/redteam/): hostile and broken submissions through real `nbgrader autograde`.

Every file of the corpus is one attack (or one broken notebook) with the score it honestly earns and
what the TA sees (tests/redteam/README.md). To keep the cost low, attacks are packed: student i gets
the i-th quiz-cell attack, the i-th amdahl-cell attack and the i-th kernel attack in one notebook
(graders run each answer cell in its own sandboxed process, so they cannot meet); notebook-level
breakage gets a student each. The students are split in two halves, graded by two plain
`nbgrader autograde` runs side by side on one gradebook (as a TA with two terminals would): each
attack also runs beside another half's student. Two honest students, graded first and last, must keep
their exact scores. Afterwards nothing of the run may be left running, no connection may have
reached the host, no file may have been planted.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import dataclasses
import glob
import hashlib
import os
import re
import signal
import socket
import subprocess
import threading
import time
import traceback
import uuid

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells, hidden_test_cells, reference_solutions

pytestmark = pytest.mark.slow

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "redteam")
NOTEBOOK = "06_quiz"
HONEST = {
    "quiz": "q1 = 10.0\nq2 = {'deadlock': 'A', 'livelock': 'B', 'starvation': 'C'}\nq3 = None\n"
    "q4 = {'allreduce': 'root', 'reduce': 'all'}\nq5 = 140.0\n",
    "amdahl": "def amdahl_speedup(p, n):\n    return 1 / ((1 - p) + p / n)\n",
}  # no input checks
HONEST_SCORE = {"quiz": 0.0, "amdahl": 4.0}
REFERENCE, LAST = "rta_00_reference", "rtb_zz_honest"  # rta_* and rtb_*: the two halves
# Limits lowered for this run only, so that the bombs cost little on a shared machine.
RUN_ENV = {"CH13_JOB_MEMORY_MB": "2048"}
# A last guard against a wedged autograde, per half; not a speed test. Every notebook has its own
# clock guards and every grader its CPU budget, so a half ends by itself: quiet in ~225 s, under the
# suite's load in 520-650 s (fresh clones), which leaves a 900 s guard too little margin.
HALF_GUARD_S = 1800
AUTOGRADE_ARGS = ["--Execute.timeout=5"]  # the kernel-side hangs; graders keep their own guards


@dataclasses.dataclass
class Entry:
    name: str
    kind: str  # cell | kernel | notebook
    target: str | None
    notebook: str | None
    scores: dict[str, float | None]  # None: not graded at all
    messages: list[tuple[str, str]]
    why: str
    source: str
    student: str = ""
    known_bug: str = ""  # a bug outside the sandbox's files, reported to the lead: xfail


def load_corpus() -> list[Entry]:
    entries = []
    for path in sorted(glob.glob(os.path.join(HERE, "*.py"))):
        text = open(path, encoding="utf-8").read()
        head = dict(kind=None, target=None, notebook=None, why="", scores={}, messages=[], known_bug="")
        for line in text.splitlines():
            m = re.match(r"# (redteam|kind|target|notebook|score|message|why|known-bug): ?(.*)$", line)
            if not m:
                break
            key, value = m.groups()
            if key == "score":
                for part in value.split():
                    gid, points = part.split("=")
                    head["scores"][gid] = None if points == "-" else float(points)
            elif key == "message":
                where, _, what = value.partition(": ")
                head["messages"].append((where, what))
            elif key in ("kind", "target", "notebook", "why", "known-bug"):
                head[key.replace("-", "_")] = value.strip()
        entries.append(
            Entry(
                os.path.basename(path)[:-3],
                head["kind"],
                head["target"],
                head["notebook"],
                head["scores"],
                head["messages"],
                head["why"],
                text,
                known_bug=head["known_bug"],
            )
        )
    return entries


CORPUS = load_corpus()


def _sampled(e: Entry) -> bool:
    """Graded by `make test`: the attacks on the machine (kernel and notebook entries) and on the quiz
    and amdahl cells, which ride in one cheap notebook; `make test-deep` grades the attacks on the
    other notebooks' cells."""
    return e.kind != "cell" or e.target in HONEST


# Which answer cells a notebook transformation touches ("all": the notebook gets a student of its
# own); one that touches none rides along with a student who carries cell and kernel attacks.
TOUCHES = {
    "invalid_json": "all",
    "empty_notebook": "all",
    "duplicate_grade_id": {"quiz"},
    "answer_metadata_stripped": {"quiz"},
    "answer_as_markdown": {"quiz"},
    "deleted_locked_cells": set(),
    "edited_locked_cells": set(),
    "wrong_kernelspec": set(),
}


def _transform(name: str, nb, refs: dict):
    nb = copy.deepcopy(nb)
    answers = answer_cells(nb)
    tests = hidden_test_cells(nb)
    if name == "invalid_json":
        return nbformat.writes(nb)[:-300]
    if name == "duplicate_grade_id":
        i = nb.cells.index(answers["quiz"])
        dup = copy.deepcopy(answers["quiz"])
        dup.source = refs["quiz"]
        nb.cells.insert(i + 1, dup)
    elif name == "deleted_locked_cells":
        nb.cells = [c for c in nb.cells if c not in tests.values()]
    elif name == "edited_locked_cells":
        for cell in tests.values():
            cell.source = "print(10.0)\n10.0"
    elif name == "wrong_kernelspec":
        nb.metadata["kernelspec"] = {"name": "julia-1.9", "display_name": "Julia 1.9", "language": "julia"}
    elif name == "answer_metadata_stripped":
        answers["quiz"].source = refs["quiz"]
        del answers["quiz"].metadata["nbgrader"]
    elif name == "answer_as_markdown":
        cell = answers["quiz"]
        md = new_markdown_cell(refs["quiz"], metadata=copy.deepcopy(cell.metadata))
        nb.cells[nb.cells.index(cell)] = md
    elif name == "empty_notebook":
        nb.cells = []
    else:
        raise KeyError(f"unknown notebook transformation {name!r}")
    return nb


def _fill(nb, sources: dict[str, str]):
    for gid, cell in answer_cells(nb).items():
        if gid in sources:
            cell.source = sources[gid]
    return nb


def _substitute(text: str, subs: dict[str, str]) -> str:
    for k, v in subs.items():
        text = text.replace(k, v)
    return text


def _plan_students(course, port: int, marker: str, corpus: list[Entry]) -> tuple[dict, list[Entry]]:
    refs = reference_solutions()
    release = course.release_notebook(NOTEBOOK)
    subs = {"__PORT__": str(port), "__MARKER__": marker, "__OTHER__": REFERENCE}
    entries = [dataclasses.replace(e, source=_substitute(e.source, subs)) for e in corpus]
    others = [e for e in entries if e.kind == "cell" and e.target not in HONEST]
    quiz = [e for e in entries if e.kind == "cell" and e.target == "quiz"]
    amdahl = [e for e in entries if e.kind == "cell" and e.target == "amdahl"]
    kernel = [e for e in entries if e.kind == "kernel"]
    students = {
        REFERENCE: {NOTEBOOK: _fill(copy.deepcopy(release), {g: refs[g] for g in HONEST})},
        LAST: {NOTEBOOK: _fill(copy.deepcopy(release), HONEST)},
    }
    for i in range(max(len(quiz), len(amdahl), len(kernel))):
        student = f"rt{_half(i + 1)}_{i + 1:02d}_packed"
        sources = dict(HONEST)
        for group in (quiz, amdahl):
            if i < len(group):
                sources[group[i].target] = group[i].source
                group[i].student = student
        nb = _fill(copy.deepcopy(release), sources)
        if i < len(kernel):
            first = min(nb.cells.index(c) for c in answer_cells(nb).values())
            nb.cells.insert(first, new_code_cell(kernel[i].source))
            kernel[i].student = student
        students[student] = {NOTEBOOK: nb}
    packed = [s for s in students if s.endswith("_packed")]
    riders = iter(packed)
    n_notebook = 0
    for e in entries:
        if e.kind == "notebook" and not TOUCHES[e.notebook]:
            e.student = next(riders)
            students[e.student][NOTEBOOK] = _transform(e.notebook, students[e.student][NOTEBOOK], refs)
        elif e.kind == "notebook":
            n_notebook += 1
            e.student = f"rt{_half(n_notebook)}_n_{e.notebook}"
            students[e.student] = {NOTEBOOK: _transform(e.notebook, _fill(copy.deepcopy(release), HONEST), refs)}
    # Attacks on the other notebooks' answer cells ride along as a second notebook, holding only
    # that answer cell (the others are left out: their test cells score 0 at once, no grader runs).
    for e in others:
        name, nb = _release_with(course, e.target)
        free = [s for s in packed if name not in students[s]]
        if not free:  # more attacks on one notebook than packed students: one more, honest in the quiz
            i = len(packed) + 1
            free = [f"rt{_half(i)}_{i:02d}_packed"]
            students[free[0]] = {NOTEBOOK: _fill(copy.deepcopy(release), HONEST)}
            packed.append(free[0])
        e.student = free[0]
        nb.cells = [c for c in nb.cells if c not in answer_cells(nb).values() or c is answer_cells(nb)[e.target]]
        students[e.student][name] = _fill(nb, {e.target: e.source})
    return students, entries


def _half(i: int) -> str:
    """Which of the two autograde runs grades the i-th student of a kind: alternately a and b."""
    return "ab"[i % 2]


def _release_with(course, grade_id: str):
    for path in sorted(glob.glob(course.path("release", ASSIGNMENT, "*.ipynb"))):
        nb = nbformat.read(path, as_version=4)
        if grade_id in answer_cells(nb):
            return os.path.basename(path)[:-6], nb
    raise KeyError(f"no release notebook has an answer cell {grade_id!r}")


def _processes_with(needle: bytes) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as f:
                    if needle in f.read():
                        found.append(f"{pid}: {open(f'/proc/{pid}/cmdline', 'rb').read()[:200]!r}")
                        break
            except OSError:
                continue
    return found


class Listener:
    """A TCP port on the host's loopback: any connection from a sandbox is a leak."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, addr = self.sock.accept()
            except OSError:
                return
            self.connections.append(repr(addr))
            conn.close()

    def close(self) -> None:
        self.sock.close()


def _notebook_text(course, student: str) -> str:
    """Every output of the student's autograded notebooks, errors included; the attacked notebook
    first (a kernel attack's cell, and the kit's note on a dead kernel, lead it)."""
    out = []
    paths = glob.glob(course.path("autograded", student, ASSIGNMENT, "*.ipynb"))
    for path in sorted(paths, key=lambda p: (not os.path.basename(p).startswith(NOTEBOOK), p)):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for o in cell.get("outputs", []):
                out.append(o.get("text", "") if isinstance(o.get("text", ""), str) else "")
                out.extend(str(v) for v in (o.get("data") or {}).values())
                if o.get("output_type") == "error":
                    out.append(f"{o.get('ename', '')}: {o.get('evalue', '')}")
    return "\n".join(out)


@pytest.fixture(scope="module")
def redteam(course, request):
    """The run of the entries this session's tests read (`make test`: the sample; `make test-deep`:
    the rest), or {"broken": why} when it broke (past its guard, say): every test that reads it then
    fails with the reason, where an error in a module fixture shows in a CI summary only as a count."""
    names = {
        item.callspec.params["name"]
        for item in request.session.items
        if item.module is request.module and item.originalname == "test_submission_earns_exactly_its_honest_score"
    }
    corpus = [e for e in CORPUS if e.name in names] if names else [e for e in CORPUS if _sampled(e)]
    try:
        return _run_redteam(course, corpus)
    except Exception:  # noqa: BLE001 - any break, reported by each test that needed the run
        return {"broken": traceback.format_exc()[-6000:]}


def _ran(redteam: dict) -> dict:
    if "broken" in redteam:
        pytest.fail("the red team's run broke:\n" + redteam["broken"], pytrace=False)
    return redteam


def _run_redteam(course, corpus: list[Entry]) -> dict:
    marker = "ch13rt" + uuid.uuid4().hex[:12]
    listener = Listener()
    students, entries = _plan_students(course, listener.port, marker, corpus)
    for student, notebooks in students.items():
        course.submit(student, notebooks)
    ref_file = course.path("submitted", REFERENCE, ASSIGNMENT, NOTEBOOK + ".ipynb")
    ref_hash = hashlib.sha256(open(ref_file, "rb").read()).hexdigest()
    saved = {k: os.environ.get(k) for k in list(RUN_ENV) + ["CH13_REDTEAM_RUN"]}
    os.environ.update(RUN_ENV, CH13_REDTEAM_RUN=marker)
    start = time.monotonic()

    def autograde(half: str) -> subprocess.CompletedProcess:
        try:
            return course.nbgrader(
                "autograde",
                ASSIGNMENT,
                "--force",
                f"--student={half}_*",
                *AUTOGRADE_ARGS,
                check=False,
                timeout=HALF_GUARD_S,
            )
        except subprocess.TimeoutExpired as e:  # say where it was: the log names each student and cell
            # nbgrader alone was killed: its kernels and graders (sandboxed, in sessions of their
            # own) would outlive it and load every later test of this worker
            for found in _processes_with(marker.encode()):
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(found.split(":")[0]), signal.SIGKILL)
            tail = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else str(e.stderr or "")
            raise AssertionError(
                f"the red team's autograde of {half}_* ran past {HALF_GUARD_S} s; its log ended:\n{tail[-6000:]}"
            ) from None

    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            halves = list(pool.map(autograde, ("rta", "rtb")))
        # one record of both runs: their logs one after the other, the worse exit status
        proc = subprocess.CompletedProcess(
            [p.args for p in halves],
            max(p.returncode for p in halves),
            "".join(p.stdout for p in halves),
            "".join(p.stderr for p in halves),
        )
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    seconds = time.monotonic() - start
    listener.close()
    result = {
        "proc": proc,
        "entries": entries,
        "students": list(students),
        "marker": marker,
        "seconds": seconds,
        "connections": listener.connections,
        "left_running": _processes_with(marker.encode()),
        "scores": {s: course.scores(s) for s in students},
        "text": {s: _notebook_text(course, s) for s in students},
        "ref_unchanged": hashlib.sha256(open(ref_file, "rb").read()).hexdigest() == ref_hash,
    }
    print(f"\nred team: {len(entries)} submissions, {len(students)} students, two autograde runs, {seconds:.0f} s")
    return result


def test_corpus_is_well_formed():
    assert len(CORPUS) >= 25
    for e in CORPUS:
        assert e.kind in ("cell", "kernel", "notebook"), e.name
        assert e.why, f"{e.name}: no `# why:`"
        if e.kind == "cell":
            assert e.target and e.target in e.scores, f"{e.name}: a cell entry names its target and score"
        if e.kind == "notebook":
            assert e.notebook and e.scores, e.name
        for where, what in e.messages:
            assert where in ("notebook", "log") or where.isidentifier(), f"{e.name}: message place {where!r}"
            assert what, e.name


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            e.name,
            marks=([pytest.mark.xfail(reason=e.known_bug, strict=True)] if e.known_bug else [])
            + ([] if _sampled(e) else [pytest.mark.deep]),
        )
        for e in CORPUS
    ],
)
def test_submission_earns_exactly_its_honest_score(redteam, name):
    redteam = _ran(redteam)
    entry = next(e for e in redteam["entries"] if e.name == name)
    got = redteam["scores"][entry.student]
    log = redteam["proc"].stderr
    scores = dict(entry.scores)
    attacked = {e.target for e in redteam["entries"] if e.kind == "cell" and e.student == entry.student}
    if entry.kind == "kernel":  # a kernel attack changes no answer cell's score
        scores = {**HONEST_SCORE, **scores}
    if entry.kind != "cell":  # cells attacked by a packed companion are that entry's to check
        scores = {g: s for g, s in scores.items() if g not in attacked}
        for gid in HONEST:
            if entry.scores.get(gid, 0) is not None and not entry.known_bug:
                assert gid in got, f"{entry.student} ({name}): {gid} was not graded\n{log[-3000:]}"
    for gid, want in scores.items():
        if want is None:  # not graded: no report, nothing but a 0 in the gradebook
            assert gid not in got or (got[gid].score == 0 and got[gid].report == ""), got[gid]
            continue
        assert gid in got, f"{entry.student}: {gid} was not graded\n{log[-3000:]}"
        assert got[gid].score == want, f"{entry.student} ({name}) {gid}: {got[gid].score} != {want}\n{got[gid].report}"
        assert got[gid].report.startswith(f"{gid}: {want:g} / "), got[gid].report
    for where, what in entry.messages:
        what = what.replace("__STUDENT__", entry.student)
        if where == "log":
            seen = log
        elif where == "notebook":
            seen = redteam["text"][entry.student]
        else:
            seen = got[where].report if where in got else ""
        shown = seen if len(seen) <= 4000 else f"{seen[:2000]}\n[...]\n{seen[-2000:]}"  # a kit note leads a notebook
        assert what.lower() in seen.lower(), f"{entry.student} ({name}): {what!r} not in {where}:\n{shown}"


@pytest.mark.harm
def test_honest_students_are_not_affected(redteam, course):
    redteam = _ran(redteam)
    scores = redteam["scores"]
    assert {g: scores[REFERENCE][g].score for g in HONEST} == {"quiz": 10.0, "amdahl": 5.0}, redteam["proc"].stderr[
        -3000:
    ]
    assert {g: scores[LAST][g].score for g in HONEST} == HONEST_SCORE
    for student in (REFERENCE, LAST):
        for g in HONEST:
            assert scores[student][g].report.startswith(f"{g}: {scores[student][g].score:g} / "), scores[student][g]
    assert redteam["ref_unchanged"], "another student's submitted notebook was changed"
    with open(course.path("gradebook.db"), "rb") as f:
        assert f.read(16) == b"SQLite format 3\x00"


def test_every_paired_cell_not_under_attack_keeps_its_honest_score(redteam):
    redteam = _ran(redteam)
    attacked = {(e.student, e.target) for e in redteam["entries"] if e.kind == "cell"}
    for e in redteam["entries"]:
        if e.kind == "kernel":
            for gid, want in HONEST_SCORE.items():
                if (e.student, gid) not in attacked:
                    assert redteam["scores"][e.student][gid].score == want, (e.student, gid)


@pytest.mark.harm
def test_nothing_is_left_running(redteam):
    redteam = _ran(redteam)
    assert redteam["left_running"] == [], "\n".join(redteam["left_running"])


@pytest.mark.harm
def test_no_connection_reached_the_host(redteam):
    redteam = _ran(redteam)
    assert redteam["connections"] == []


@pytest.mark.harm
def test_nothing_was_planted_or_left_on_disk(redteam, course):
    redteam = _ran(redteam)
    marker = redteam["marker"]
    leftovers = [
        p
        for d in ("/tmp", "/var/tmp", "/dev/shm", os.path.join(ROOT, "kit"), ROOT, course.root)
        for p in glob.glob(os.path.join(d, f"*{marker}*"))
    ]
    assert leftovers == []
    assert not os.path.exists(course.path("graders_fake.py"))
    for db in glob.glob(os.path.join(ROOT, "*.db")):  # the corpus aims at these too
        with open(db, "rb") as f:
            assert f.read(16) == b"SQLite format 3\x00", db
    assert open(os.path.join(ROOT, "graders", "quiz.py")).read() != "{}"


# ---------------------------------------------------------------------------------------------
# The sandbox's tiers (docs/sandbox.md): what a probe answer sees in each, graded directly.

PROBE = r'''
import json, os, socket
seen = {"uid": os.getuid(), "tier": os.environ.get("CH13_SANDBOX_TIER"),
        "graders": os.path.exists(os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0], "graders", "quiz.py")),
        "cwd": sorted(os.listdir("."))[:10]}
seen["processes"] = len([p for p in os.listdir("/proc") if p.isdigit()])  # a PID namespace's: its own
try:      # other jobs' folders (and anything a host process left in /tmp)
    seen["tmp"] = len([n for n in os.listdir("/tmp") if n not in __CARRIED__
                       and not n.startswith(("ch13-grade-", "ch13-sandbox-", "ch13-subject-"))])
except OSError:
    seen["tmp"] = "unlistable"
try:
    socket.create_connection(("127.0.0.1", __PORT__), timeout=2).close()
    seen["host_port"] = "open"
except OSError:
    seen["host_port"] = "closed"
try:      # a file its uid may read: Landlock's allow-list (tiers 2, 3) or the fresh root (tier 1) hides it
    open(os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0], "graders", "quiz.py")).read(1)
    seen["graders_read"] = "readable"
except OSError:
    seen["graders_read"] = "refused"
try:      # a file its uid owns in the kit's checkout (tiers 2, 3: the TA's files): chmod needs no open
    os.chmod(__OWNED__, 0o600)
    seen["chmod_owned"] = "changed"
except OSError:
    seen["chmod_owned"] = "refused"
try:      # the TA's terminals (same uid in tiers 2, 3); /dev/null stays writable
    seen["dev_pts"] = len(os.listdir("/dev/pts"))
except OSError:
    seen["dev_pts"] = "refused"
try:      # the root tier: a /dev of its own; Landlock's tiers: only some nodes, not the listing
    seen["dev"] = sorted(os.listdir("/dev"))
except OSError:
    seen["dev"] = "refused"
with open("/dev/null", "w") as null:
    null.write("ok")
try:      # the judge (the subject's parent: kit.sandbox execs the subject) holds the key
    open(f"/proc/{os.getppid()}/mem", "rb").close()
    seen["judge_memory"] = "readable"
except (OSError, ValueError):
    seen["judge_memory"] = "refused"
try:      # its own memory, writable: any object of the subject (the hook's tables, a harness's counters)
    open("/proc/self/mem", "r+b").close()
    seen["own_memory"] = "writable"
except (OSError, ValueError):
    seen["own_memory"] = "refused"
raise RuntimeError("SEEN" + json.dumps(seen) + "SEEN")
'''

GRADE_PROBE = r'''
import json, sys
from kit.grading import grade_cell  # the installed kit (run from / as another uid)
print(grade_cell("amdahl", sys.stdin.read()).report())
'''


def _probe(source: str, uid: int | None, env: dict) -> dict:
    import json
    import subprocess
    import sys

    cmd = [sys.executable, "-c", GRADE_PROBE]
    if uid is not None:
        cmd = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] + cmd
    out = subprocess.run(
        cmd,
        input=source,
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
        env={**os.environ, "HOME": "/tmp", **env},
    )
    m = re.search(r"SEEN(\{.*?\})SEEN", out.stdout)
    assert m, out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def tiers():
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        pytest.skip("needs root (and setpriv) to try every tier on one machine")
    listener = Listener()
    # a kit that lives under /tmp (a CI clone) is carried into the private /tmp: not a leak
    real = os.path.realpath(ROOT).split("/")
    carried = {real[2]} if len(real) > 2 and real[1] == "tmp" else set()
    # owned by the uid tiers 2 and 3 run as here (a TA owns their checkout)
    owned = os.path.join(ROOT, f".ch13-tier-probe-{os.getpid()}")
    with open(owned, "w") as f:
        f.write("probe")
    os.chown(owned, 65533, 65533)
    os.chmod(owned, 0o644)
    source = PROBE.replace("__PORT__", str(listener.port)).replace("__CARRIED__", repr(carried))
    source = source.replace("__OWNED__", repr(owned))
    try:
        seen = {}
        for tier, uid, env in [
            ("root", None, {}),
            ("userns", 65533, {}),
            ("limits-only", 65533, {"CH13_SANDBOX_NAMESPACES": "0"}),
        ]:
            seen[tier] = _probe(source, uid, env)
            seen[tier]["mode_after"] = oct(os.stat(owned).st_mode & 0o777)
    finally:
        listener.close()
        os.unlink(owned)
    seen["connections"] = listener.connections
    return seen


def test_tier_root_isolates_everything(tiers):
    s = tiers["root"]
    assert s["tier"] == "root" and s["uid"] >= 200_000
    assert not s["graders"] and s["host_port"] == "closed" and s["judge_memory"] == "refused"
    assert s["graders_read"] == "refused" and s["chmod_owned"] == "refused" and s["processes"] < 5
    assert s["own_memory"] == "refused"  # the subject is not dumpable (kit.audit.seal_memory)
    assert s["tmp"] == 0  # a private /tmp: only its own work folder and home
    assert s["cwd"] == ["answer.py"]  # the subject's folder: the cell, no results file, no key
    # a /dev of its own: the nodes a job opens by name, no pseudo-terminals (kit.sandbox._minimal_dev:
    # a pty was a channel between a world's ranks, which share a job's uid)
    assert s["dev_pts"] == "refused"
    dev = {"null", "zero", "full", "random", "urandom", "shm", "fd", "stdin", "stdout", "stderr"}
    assert {d for d in s["dev"] if not d.startswith("nvidia")} == dev


def test_tier_userns_isolates_files_and_network(tiers):
    s = tiers["userns"]
    if s["tier"] != "userns":
        pytest.skip(f"unprivileged user namespaces are not available here ({s['tier']})")
    assert s["uid"] == 65533 and not s["graders"] and s["host_port"] == "closed"
    assert s["judge_memory"] == "refused" and s["own_memory"] == "refused" and s["graders_read"] == "refused"
    from kit import landlock

    # no other job's folder in sight: its /tmp is its own tmpfs; where the checkout lives under /tmp
    # (a CI clone) and was carried over it, Landlock keeps that /tmp's listing from the job instead
    under_tmp = os.path.realpath(ROOT).startswith("/tmp/")
    assert s["tmp"] == ("unlistable" if under_tmp and landlock.abi() else 0)
    assert s["processes"] < 5  # its own PID namespace and /proc: no other job's command line or token
    # the host read-only (kit.sandbox._read_only): the TA's own files keep their modes
    assert s["chmod_owned"] == "refused" and s["mode_after"] == "0o644"
    if landlock.abi():
        assert s["dev_pts"] == "refused"


def test_tier_limits_only_is_what_the_docs_say(tiers):
    s = tiers["limits-only"]
    assert s["tier"] == "limits-only" and s["uid"] == 65533
    # documented as NOT covered in this tier: the network, the names of hidden files, and the
    # modes and times of the files its uid owns (Landlock has no right for chmod or utime)
    assert s["graders"] and s["host_port"] == "open" and s["chmod_owned"] == "changed" and s["processes"] >= 5
    from kit import landlock

    if landlock.abi():  # Landlock's allow-list (kit/landlock.py): the contents stay out of reach
        assert s["graders_read"] == "refused" and s["tmp"] == "unlistable" and s["dev_pts"] == "refused"
    else:  # a kernel without it: plain file permissions only, as documented
        assert s["graders_read"] == "readable" and s["tmp"] > 0
    # still covered: the judge's memory (its key, its hidden answers) cannot be read, nor the
    # subject's own written
    assert s["judge_memory"] == "refused" and s["own_memory"] == "refused"
