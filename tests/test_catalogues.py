"""Does every grader give full marks to each right answer and fail each wrong one with the right
message — through real `nbgrader autograde`, exactly as a TA grades?

The catalogues are files: graders/catalogue/<grade_id>/{right,wrong}_<name>.py, each the source of a
whole answer cell with a header (`# verdict: pass|fail`, `# message: <expected text>`, `# why: ...`),
read by graders/_catalogue.py.
"""

from __future__ import annotations

import ast
import re
import textwrap

import pytest

from graders._catalogue import entries
from tests.nbgrading import ADDRESS, grade_answers

HAN = re.compile(r"[\u4e00-\u9fff]")

# (grade_id, name, source, expected messages) for every catalogue file; the verdict is in the name.
CATALOGUE = [(e.grade_id, e.name, e.source, e.messages) for e in entries()]
FAILS = {(e.grade_id, e.name): e.fails for e in entries() if e.fails}  # `# fails:` pins the failing tests
SAMPLE_OF = {(e.grade_id, e.name): e.sample for e in entries() if e.sample}  # `# sample:` its failure class


def _check(report: str, score: float, max_score: float, name: str, messages: list[str]) -> None:
    if name.startswith("right_"):
        assert score == max_score, f"a right answer lost points:\n{report}"
    else:
        assert score < max_score, f"a wrong answer got full marks:\n{report}"
        for m in messages:
            assert m.lower() in report.lower(), f"expected {m!r} in the feedback:\n{report}"


@pytest.fixture(scope="module")
def verdicts(request):
    """The entries this session's tests read, each graded once by kit.grading.grade_cell — the judge
    process and its sandboxed subject, exactly as nbgrader's autograde calls them — as many at a
    time as the class runner: `make test` grades the sample, `make test-deep` the rest."""
    from concurrent.futures import ThreadPoolExecutor

    from kit.classrun import default_jobs
    from kit.grading import grade_cell

    sources = {(gid, name): source for gid, name, source, _ in CATALOGUE}
    wanted = set()
    for item in request.session.items:
        params = getattr(item, "callspec", None) and item.callspec.params
        if item.module is not request.module or not params:
            continue
        if "name" in params:
            wanted.add((params["grade_id"], params["name"]))
        elif item.originalname in (
            "test_replay_lines_fail_the_same_way",
            "test_replay_calls_fail_when_pasted",
            "test_scheduled_replays_fail_the_same_way",
            "test_pasted_replays_fail_the_same_way",
        ):
            wanted |= {(e.grade_id, e.name) for e in entries(params["grade_id"])}
    with ThreadPoolExecutor(default_jobs()) as pool:
        futures = {k: pool.submit(grade_cell, k[0], sources[k]) for k in sorted(wanted)}
        return {k: f.result() for k, f in futures.items()}


# Graded a second time, through plain `nbgrader autograde`: per grade_id, the wrong answers whose
# grading draws hypothesis examples, thread schedules, crash schedules, CUDA launches or real worlds
# (its first wrong answer where none does). The same submission gets the same report on every run
# and every path (test_round_trip_reports_what_the_collector_graded). Every grade_id's right answer
# makes the same round trip in tests/test_pipeline.py, the reference solutions graded as one student.
DRAWN = [
    ("counter", "wrong_unlocked_increment"),
    ("counter", "wrong_missing_join"),
    ("semaphore_pool", "wrong_if_wait"),
    ("bounded_buffer", "wrong_notify_one_shared_condition"),
    ("bank_transfer", "wrong_argument_order"),
    ("vec_add", "wrong_blocks_floor"),
    ("tiled_matmul", "wrong_chapter_kernel"),
    ("histogram", "wrong_blocks_floor"),
    ("dot_reduction", "wrong_early_return"),
    ("all_reduce", "wrong_buffer_reuse"),
    ("rs_ag_all_reduce", "wrong_gather_everything"),
    ("ddp_average", "wrong_broadcast_rank0"),
    ("word_count", "wrong_no_retries"),
    ("word_count", "wrong_builtin_hash"),
    ("fsdp_checkpoint", "wrong_no_barrier"),
    ("fsdp_checkpoint", "wrong_every_rank_writes"),
    ("pipeline", "wrong_bypasses_the_stage"),
    ("tensor_parallel", "wrong_avg_op"),
    ("zero1", "wrong_float32_buffer"),
]


def _round_trip_entries() -> list[tuple[str, str, str, list[str]]]:
    """DRAWN, and the first wrong answer of each grade_id DRAWN does not name."""
    by_key = {(gid, name): (gid, name, source, messages) for gid, name, source, messages in CATALOGUE}
    picked = [by_key[k] for k in DRAWN]
    for gid, name, source, messages in CATALOGUE:
        if name.startswith("wrong_") and gid not in {e[0] for e in picked}:
            picked.append((gid, name, source, messages))
    return picked


ROUND_TRIPS = _round_trip_entries()
ALSO_SAMPLED = {(e[0], e[1]) for e in ROUND_TRIPS}  # graded by make test: its round trips read them


def test_the_screen_flags_right_answers_only_for_the_honest_idioms_it_never_refuses():
    """A right answer is flagged for a TA's review only for ``vars(self)`` or a computed
    ``getattr``/``setattr`` on its own object (flagged, never refused). ``partial[cuda.blockIdx.x] = s`` is
    no monkeypatch of ``cuda``: taken for one, it would flag every right reduction kernel."""
    from graders.screen import screen

    flagged = {
        f"{e.grade_id}/{e.name}": [
            line for line in screen(e.source) if not any(h in line for h in ("computed attribute name", "uses vars"))
        ]
        for e in entries()
        if e.name.startswith("right_")
    }
    assert {k: v for k, v in flagged.items() if v} == {}


@pytest.mark.parametrize("grade_id", sorted({e.grade_id for e in entries()}))
def test_catalogue_is_big_enough(grade_id):
    """At least 4 right answers, written differently, and 8 realistic wrong ones per answer cell."""
    kinds = [e.right for e in entries(grade_id)]
    assert kinds.count(True) >= 4 and kinds.count(False) >= 8, grade_id


def _sampled(grade_id: str, name: str) -> bool:
    """Graded here by `make test`: each failure class's `# sample:` and the answers the round trips
    read; `make test-deep` grades the others. Every grade_id's reference gets its full marks in
    make test through tests/test_pipeline.py's nbgrader run (the solutions notebooks)."""
    return (grade_id, name) in SAMPLE_OF or (grade_id, name) in ALSO_SAMPLED


@pytest.mark.slow
@pytest.mark.parametrize(
    "grade_id,name,source,messages",
    [pytest.param(*e, marks=() if _sampled(e[0], e[1]) else pytest.mark.deep) for e in CATALOGUE],
    ids=[f"{e[0]}/{e[1]}" for e in CATALOGUE],
)
def test_catalogue_entry(verdicts, grade_id, name, source, messages):
    verdict = verdicts[(grade_id, name)]
    _check(verdict.report(), verdict.score, verdict.max_score, name, messages)
    first = [r.test for r in verdict.results if not r.passed][:1]
    if (grade_id, name) in SAMPLE_OF:  # the failure class it stands for in make test
        assert first == [SAMPLE_OF[(grade_id, name)]], verdict.report()
    elif first:  # every failure class has a sample in make test
        classes = {c for (g, _), c in SAMPLE_OF.items() if g == grade_id}
        assert first[0] in classes, (
            f"{grade_id}/{name} fails {first[0]} first, a failure class no `# sample:` answer stands for in "
            f"make test (samples: {sorted(classes)}): add `# sample: {first[0]}` to one such wrong answer"
        )
    assert not verdict.problem, verdict.report()  # no hang, crash or forged line behind any verdict
    # nothing that changes from run to run: an object's address (a dict keyed by id(obj)), a port
    assert not ADDRESS.search(verdict.report()), verdict.report()
    for r in verdict.results:  # every failure explains itself, in Chinese and English (conftest: both)
        assert r.passed or r.message.strip(), f"{r.test} failed without a message"
        assert r.passed or HAN.search(r.message), f"{r.test}'s message has no Chinese:\n{r.message}"
    if (grade_id, name) in FAILS:  # a wrong answer that costs exactly these tests, the others pass
        failed = tuple(sorted(r.test for r in verdict.results if not r.passed))
        assert failed == FAILS[(grade_id, name)], verdict.report()


# Every replay test pastes a failure's replay after the wrong answer's cell, as a student does in
# the notebook, and reads what it shows: this script runs each (name, cell, replay code) it reads.
REPLAY = textwrap.dedent(r"""
    import ast, collections, contextlib, io, json, linecache, os, sys
    import kit; kit.source_ch13lib()
    import __main__
    channel = os.fdopen(os.dup(1), "w")  # the answer goes here, whatever Ray does to stdout


    def replay(name, source, code):
        # the cell, then the replay in a cell of its own, in __main__ as in a notebook: what it printed,
        # what its last expression gave (what the notebook shows), and the records it counted
        filename = f"<cell {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        ns = vars(__main__)
        saved = dict(ns)
        out = io.StringIO()
        try:
            exec(compile(source, filename, "exec"), ns)
            tree = ast.parse(code)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            with contextlib.redirect_stdout(out):
                exec(compile(tree, "<replay>", "exec"), ns)
                value = eval(compile(ast.Expression(last.value), "<replay>", "eval"), ns) if last else None
            got = {"value": value if isinstance(value, bool) else None, "shown": repr(value)}
            if isinstance(ns.get("records"), list):
                got["right"] = value == dict(collections.Counter(w for r in ns["records"] for w in r.split()))
        except BaseException as e:  # a plain call's failure may be what it raises: it is shown
            got = {"value": None, "shown": f"raised {type(e).__name__}: {e}", "said": str(e)}
            got["kinds"] = [k.__name__ for k in type(e).__mro__]
        finally:
            ns.clear()
            ns.update(saved)
        return dict(got, printed=out.getvalue())


    channel.write(json.dumps({n: replay(n, s, c) for n, s, c in json.loads(sys.stdin.read())}) + "\n")
    channel.flush()
""")


def _replayed(cases: list[tuple[str, str, str]], timeout: int, **env: str) -> dict[str, dict]:
    """What REPLAY shows for each (name, cell, replay code), run in a Python of its own."""
    import json
    import os
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", REPLAY],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _failure(got: dict) -> str | None:
    """What a notebook 02 replay line's failure says (None: it passed), as the feedback words it: a
    CheckFailed its message, any other exception its type and message."""
    if "kinds" not in got:
        return None
    assert "Exception" in got["kinds"], got["shown"]  # a BaseException that is no Exception is no failure
    return got["said"] if "CheckFailed" in got["kinds"] else got["shown"].removeprefix("raised ")


# A failing check of notebook 02 ends with its replay line; run in the student's notebook, over the
# cell's own functions, it must show the same failure (on the checking simulator, not numba's own).
CUDA_IDS = ("vec_add", "vec_add_grid_stride", "histogram", "dot_reduction", "tiled_matmul")


# Failures that show only after earlier calls in the same grading (state kept between calls): one
# pasted call cannot show them, so their feedback must name that cause instead.
HISTORY = {"histogram": {"wrong_state_between_calls": "counts kept from an earlier call"}}


@pytest.mark.slow
@pytest.mark.deep  # every wrong answer of the grade_id: the whole catalogue's grading
@pytest.mark.parametrize("grade_id", CUDA_IDS)
def test_replay_lines_fail_the_same_way(verdicts, grade_id):
    """Each wrong answer's first failing test: its replay line, pasted after the cell, fails with the
    same first line (what went wrong, where) on the checking simulator."""
    cases, firsts, messages = [], {}, {}
    for e in entries(grade_id):
        failed = [r for r in verdicts[(grade_id, e.name)].results if not r.passed]
        if e.right or not failed or "Replay it: " not in failed[0].message:
            continue
        message = failed[0].message
        cases.append((e.name, e.source, message.split("Replay it: ", 1)[1].splitlines()[0]))
        firsts[e.name], messages[e.name] = message.splitlines()[0], message
    assert len(cases) >= 5, f"{grade_id}: too few wrong answers end with a replay line"
    again = {n: _failure(got) for n, got in _replayed(cases, 600, NUMBA_ENABLE_CUDASIM="1").items()}
    for name, cause in HISTORY.get(grade_id, {}).items():  # no one call shows it: the message names the cause
        assert name in firsts, f"{grade_id}/{name}: no failure with a replay line"
        assert cause in messages[name], f"{grade_id}/{name}: the feedback does not say {cause!r}"
        del firsts[name]
    differ = {
        n: (firsts[n], (again[n] or "passed").splitlines()[0])
        for n in firsts
        if not again[n] or again[n].splitlines()[0] != firsts[n]
    }
    assert not differ, differ


# The replay calls of notebooks 03 and 07, each with the module a notebook imports it from.
REPLAY_CALLS = {
    "check_case": "ch13lib.collective_checks",
    "check_pipeline_case": "ch13lib.parallel_checks",
    "check_tp_case": "ch13lib.parallel_checks",
    "check_zero_case": "ch13lib.parallel_checks",
}
CALL_IDS = ("all_reduce", "rs_ag_all_reduce", "pipeline", "tensor_parallel", "zero1")


def _replay_call(message: str) -> str | None:
    """The first replay call a message names (``check_case(fn, world_size=4, ...)``), parentheses balanced."""
    m = re.search(rf"\b(?:{'|'.join(REPLAY_CALLS)})\(", message)
    if not m:
        return None
    depth = 0
    for i in range(m.end() - 1, len(message)):
        depth += {"(": 1, ")": -1}.get(message[i], 0)
        if depth == 0:
            return message[m.start() : i + 1]
    return None


@pytest.mark.slow
@pytest.mark.deep  # every wrong answer of the grade_id: the whole catalogue's grading
@pytest.mark.parametrize("grade_id", CALL_IDS)
def test_replay_calls_fail_when_pasted(verdicts, grade_id):
    """Each wrong answer's first failing test names a replay call (notebooks 03 and 07): pasted after
    the cell, it shows a ✘ and returns False; where the case's values are public, it prints a line
    of the feedback's message word for word (what went wrong: a real world's message adds a line
    about that world before it)."""
    cases, firsts = [], {}
    for e in entries(grade_id):
        failed = [r for r in verdicts[(grade_id, e.name)].results if not r.passed]
        call = _replay_call(failed[0].message) if failed and not e.right else None
        if call:
            function = call.split("(")[0]
            cases.append((e.name, e.source, f"from {REPLAY_CALLS[function]} import {function}\n{call}"))
            hidden = any(word in failed[0].message for word in ("hidden", "隐藏"))  # keyed values: not these
            firsts[e.name] = None if hidden else _said_lines(failed[0].message)
    assert len(cases) >= 3, f"{grade_id}: too few wrong answers name a replay call"
    again = _replayed(cases, 900)
    passing = {n: (got["shown"][:300], got["printed"][-600:]) for n, got in again.items() if got["value"] is not False}
    assert not passing, f"{grade_id}: replay calls that do not fail when pasted: {passing}"
    differ = {
        name: (sorted(said)[:2], again[name]["printed"][:600])
        for name, said in firsts.items()
        if said is not None and not said & _said_lines(again[name]["printed"])
    }
    assert not differ, f"{grade_id}: the pasted replay says something else: {differ}"


# The replays of notebooks 04 and 05: a failing test's smallest failing input is code to paste in
# the next cell (records and a run, or a check of ch13lib that makes the same run on the checking
# harness); notebook 05's follows its scenario, after "replay in the notebook: ".
PASTED_IDS = ("word_count", "fsdp_checkpoint")
CHECKS = ("check_run", "check_partition", "self_check")  # a replay that ends in one returns False


def _pasted_code(example: str) -> str | None:
    """The code of a failure's smallest failing input, as the student pastes it; None where it is
    only the input (hypothesis's ``name=value`` lines: nothing is called)."""
    if "replay in the notebook: " in example:
        return example.split("replay in the notebook: ", 1)[1].splitlines()[0]
    tree = ast.parse(example)
    return example if any(isinstance(node, ast.Expr) for node in tree.body) else None


@pytest.mark.slow
@pytest.mark.deep  # every wrong answer of the grade_id: the whole catalogue's grading
@pytest.mark.parametrize("grade_id", PASTED_IDS)
def test_pasted_replays_fail_the_same_way(verdicts, grade_id):
    """Each wrong answer's first failing test (notebooks 04 and 05): its replay, pasted after the
    cell, fails. A check of ch13lib returns False, and check_run prints a line of the feedback word
    for word (it judges with the grader's own checks, ch13lib.word_count_checks); a plain run counts
    its records wrong, or raises what the feedback says it raised; a plain call shows the value the
    feedback shows."""
    cases, messages = [], {}
    for e in entries(grade_id):
        failed = [r for r in verdicts[(grade_id, e.name)].results if not r.passed]
        code = _pasted_code(failed[0].example) if failed and not e.right and failed[0].example else None
        if code:
            cases.append((e.name, e.source, code))
            messages[e.name] = (failed[0].message, code)
    assert len(cases) >= 8, f"{grade_id}: too few wrong answers end with a replay"
    again = _replayed(cases, 1500)
    wrong = {}
    for name, (message, code) in messages.items():
        got, last = again[name], code.strip().splitlines()
        call = [line for line in last if not line.startswith("#")][-1]
        if call.split("(")[0].split("; ")[-1] in CHECKS:
            ok = got["value"] is False
            if ok and call.startswith("check_run("):
                ok = bool(_said_lines(message) & _said_lines(got["printed"]))
        elif got["shown"].startswith("raised "):  # as the feedback says it raised
            ok = got["shown"].split()[1].rstrip(":") in message
        elif "right" in got:
            ok = got["right"] is False
        else:
            ok = got["shown"] in message
        if not ok:
            wrong[name] = (message[-300:], code[-300:], got["shown"][:300], got["printed"][-600:])
    assert not wrong, f"{grade_id}: replays that do not fail the same way when pasted: {wrong}"


# The replays of notebook 01: a failing scenario's smallest failing input ends with the code that
# replays it on the scheduler, `sync_checks.replay(Class, SCENARIO, "schedule")`, after its
# description in each language; pasted after the cell it prints the same story.
SYNC_IDS = ("counter", "bank_transfer", "bounded_buffer", "semaphore_pool")
SYNC_REPLAY = "from ch13lib import sync_checks\n"


@pytest.mark.slow
@pytest.mark.deep  # every wrong answer of the grade_id: the whole catalogue's grading
@pytest.mark.parametrize("grade_id", SYNC_IDS)
def test_scheduled_replays_fail_the_same_way(verdicts, grade_id):
    """Each wrong answer's first failing test (notebook 01) ends with a replay on the scheduler:
    pasted after the cell, it prints the failure, a line of the feedback word for word."""
    cases, messages = [], {}
    for e in entries(grade_id):
        failed = [r for r in verdicts[(grade_id, e.name)].results if not r.passed]
        example = failed[0].example if failed and not e.right else ""
        if SYNC_REPLAY in example:
            cases.append((e.name, e.source, SYNC_REPLAY + example.split(SYNC_REPLAY, 1)[1]))
            messages[e.name] = failed[0].message
    assert len(cases) >= 5, f"{grade_id}: too few wrong answers end with a replay"
    again = _replayed(cases, 900)
    differ = {
        name: (sorted(_said_lines(message))[:2], again[name]["shown"], again[name]["printed"][:600])
        for name, message in messages.items()
        if not _said_lines(message) & _said_lines(again[name]["printed"])
    }
    assert not differ, f"{grade_id}: replays that do not print the failure when pasted: {differ}"


def _said_lines(text: str) -> set[str]:
    """The lines of prose in ``text`` (a ✘ mark, indentation, replay lines and pointers left out)."""
    lines = {x.strip().removeprefix("✘ ") for x in text.splitlines()}
    return {x for x in lines if len(x) >= 20 and not re.match(r"(Replay|重现|\(同上\)|\(as above\))", x)}


@pytest.fixture(scope="module")
def graded(course):
    """(grade_id, name) -> its cell's score, the round-trip answers graded by the class runner
    (nbgrader autograde) in as few students as hold them: a student answers each grade_id at most
    once, beside other grade_ids' answers. A cell's grading reads only that cell's source, so its
    report does not depend on the answers beside it (the collector graded each alone)."""
    students: list[dict[str, str]] = []
    seat = {}
    for gid, name, source, _ in ROUND_TRIPS:
        k = next((i for i, answers in enumerate(students) if gid not in answers), len(students))
        if k == len(students):
            students.append({})
        students[k][gid] = source
        seat[(gid, name)] = f"round_trip_{k}"
    scores = grade_answers(course, {f"round_trip_{k}": a for k, a in enumerate(students)})
    return {key: scores[student][key[0]] for key, student in seat.items()}


@pytest.mark.slow
@pytest.mark.parametrize(
    "grade_id,name,source,messages",
    ROUND_TRIPS,
    ids=[f"{e[0]}/{e[1]}" for e in ROUND_TRIPS],
)
def test_nbgrader_round_trip(graded, grade_id, name, source, messages):
    """Through the plain `nbgrader autograde` a TA runs: the score lands in the gradebook."""
    cell = graded[(grade_id, name)]
    _check(cell.report, cell.score, cell.max_score, name, messages)


@pytest.mark.slow
@pytest.mark.parametrize(
    "grade_id,name",
    [(e[0], e[1]) for e in ROUND_TRIPS],
    ids=[f"{e[0]}/{e[1]}" for e in ROUND_TRIPS],
)
def test_round_trip_reports_what_the_collector_graded(graded, verdicts, grade_id, name):
    """Determinism across runs and paths: the report nbgrader's round trip wrote in the test cell is
    word for word the one grade_cell gave the same answer in the collector."""
    cell = graded[(grade_id, name)]
    assert cell.report.strip() == verdicts[(grade_id, name)].report().strip()
