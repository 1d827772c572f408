"""Grade one answer cell in a separate, sandboxed process and read back its verdicts.

This is the only path from a submission to a score: nbgrader's autograde (kit/external_grade.py),
the class runner, the kit's tests and the benchmarks all call :func:`grade_cell`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import tempfile
import time

from kit import ROOT, STEADY_ENV, judges, source_ch13lib
from kit.config import Feedback, Judges, Sandbox
from kit.jobs import Watchdog, kill_job, new_token, sandbox_uid
from kit.judge import BACKSTOP
from kit.result import Result

source_ch13lib()
from ch13lib.lang import ENV as LANG_ENV  # noqa: E402 - after the path to ch13lib
from ch13lib.lang import Both, Messages, Once  # noqa: E402
from ch13lib.lang import use as use_language  # noqa: E402, F401 - re-exported for ExternalGrade

# What the report says around the tests' own messages, in the course's language (ch13lib/lang.py).
SAY = Messages(
    points=("分", "points"),
    flagged=("已标记, 请助教复查 (分数只由测试决定): ", "flagged for a TA's review (the score is the tests' alone): "),
    same=("(原因同上)", "(same reason as above)"),
    smallest=("最小的失败输入:", "smallest failing input:"),
    stub=("尚未实现: 答案单元仍是发布时的占位代码", "not implemented yet: the answer cell is still the release's stub"),
    missing=("提交的 notebook 里没有答案单元", "the answer cell is missing from the notebook"),
    # why some tests have no verdict of their own (Verdict.problem)
    no_cell=(
        "提交的 notebook 里没有答案单元 `{grade_id}` (被删除或改名了?)",
        "no answer cell `{grade_id}` in the submitted notebook (deleted or renamed?)",
    ),
    timeout=(
        "评分在 {s} 秒后停止: 你的代码始终没有结束 (死循环、死锁, 或一个永远等不到结果的等待)",
        "grading stopped after {s} s: your code never finished "
        "(an infinite loop, a deadlock, or a wait that nothing ends)",
    ),
    killed=(
        "评分进程被信号 {n} 终止 (原生代码崩溃, 或触及资源限制)",
        "the grading process was killed by signal {n} (a crash in native code, or a resource limit)",
    ),
    exited=("评分进程以状态 {code} 退出{tail}", "the grading process exited with status {code}{tail}"),
    forged=(
        "发现并忽略了 {n} 行不是评分程序写的结果 (已标记, 请助教复查)",
        "{n} result line(s) not written by the grader were found and ignored (flagged for the TA)",
    ),
    ended=("评分进程在所有测试运行完之前就结束了", "the grading process ended before every test had run"),
    no_verdict=("没有结论: {why}", "no verdict: {why}"),
    not_run=("未运行", "not run"),
)

DEFAULT_TIMEOUT_S = 300.0
VERDICTS_FORMAT = 1  # of Verdict.to_json(); a reader refuses any other
VERDICTS_SUFFIX = ".verdicts.json"  # <notebook stem>.verdicts.json, beside the autograded notebook
PICTURES_SHOWN = 3  # pictures a test cell shows under its report


@dataclasses.dataclass
class Verdict:
    grade_id: str
    results: list[Result]  # every test's, in plan order
    problem: str = ""  # why some tests have no verdict of their own (hang, crash, missing cell)
    flags: list[str] = dataclasses.field(default_factory=list)  # the screen's early warnings, for the TA
    # the screen's refusals: the cell reaches into the grading process, so it was not graded and a
    # TA reviews it (the judge says so on a line of its own, not only in the tests' messages)
    refused: list[str] = dataclasses.field(default_factory=list)

    @property
    def tampered(self) -> bool:
        return bool(self.refused)

    @property
    def score(self) -> float:
        return round(sum(r.points for r in self.results), 6)

    @property
    def max_score(self) -> float:
        return round(sum(r.max_points for r in self.results), 6)

    def pictures(self) -> list[tuple[str, str]]:
        """(test, base64 PNG) of the first failed tests that drew one: what the feedback shows."""
        drawn = [(r.test, r.picture) for r in self.results if not r.passed and r.picture]
        return drawn[:PICTURES_SHOWN]

    def to_json(self) -> dict:
        """The verdict as plain data, for the readers after grading (kit/report.py): they read this
        record, never the report's wording."""
        return {
            "format": VERDICTS_FORMAT,
            "grade_id": self.grade_id,
            "score": self.score,
            "max_score": self.max_score,
            "problem": self.problem,
            "flags": list(self.flags),
            "tampered": self.tampered,
            "refused": list(self.refused),
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: dict) -> "Verdict":
        if not isinstance(data, dict) or data.get("format") != VERDICTS_FORMAT:
            raise ValueError(f"not a verdict record of format {VERDICTS_FORMAT}")
        results = [Result.from_json(r) for r in data["results"]]
        return cls(data["grade_id"], results, data["problem"], list(data["flags"]), list(data["refused"]))

    def report(self) -> str:
        """What the student and the TA read in the test cell's output."""
        lines = [f"{self.grade_id}: {self.score:g} / {self.max_score:g} {SAY('points')}"]
        lines.extend(f"!! {line}" for line in self.problem.splitlines())  # one line per language
        if self.flags:
            lines.append(SAY("flagged") + "; ".join(self.flags[:5]))
        previous, once = None, Once()  # tests that fail for one reason explain it once
        for r in self.results:
            mark = "PASS" if r.passed else "FAIL"
            lines.append(f"[{mark}] {r.test} ({r.points:g}/{r.max_points:g})")
            if not r.passed:
                if r.message == previous:
                    lines.append(f"       {SAY('same')}")
                    continue
                previous = r.message
                for line in once(r.message).splitlines():
                    lines.append(f"       {line}")
                if r.example:
                    lines.append(f"       {SAY('smallest')}")
                    lines.extend(f"         {line}" for line in r.example.splitlines())
        return "\n".join(lines)


def write_verdicts(path: str, verdicts: dict[str, Verdict]) -> None:
    """grade_id -> record, as one JSON file at ``path``, replaced atomically: a file or a symlink
    already there is replaced, never written through."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".verdicts-", suffix=".tmp")  # O_EXCL: no planted link
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({gid: v.to_json() for gid, v in verdicts.items()}, f)
        os.chmod(tmp, 0o644)  # as readable as the notebook beside it (mkstemp makes 0600)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def read_verdicts(path: str) -> dict[str, Verdict]:
    """What :func:`write_verdicts` wrote (OSError or ValueError when missing or malformed)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ValueError("not a dict of verdict records")
    return {gid: Verdict.from_json(v) for gid, v in data.items()}


_plans: dict[str, dict] = {}


def plans() -> dict[str, dict]:
    """Every grader's tests and points, made once by ``make release`` (graders/plans.json,
    committed; a test fails when it is stale): no grading starts a process to learn them."""
    if not _plans:
        with open(os.path.join(ROOT, "graders", "plans.json"), encoding="utf-8") as f:
            _plans.update(json.load(f))
    return _plans


def plan(grade_id: str) -> dict:
    return plans()[grade_id]


def harness_modules() -> list[str]:
    """The harness modules the subjects' zygote holds: those of every grader (graders/plans.json)
    whose subject is worth forking (kit/subjects.py: it imports torch or Ray)."""
    from kit.subjects import worth_forking

    heavy = [info.get("harness", []) for info in plans().values() if worth_forking(info.get("harness", []))]
    return sorted({m for harness in heavy for m in harness})


def warm(grade_ids, launch: Judges | None = None) -> None:
    """Have these graders' judges imported now, ahead of their cells, and the subjects' harnesses
    where one of them needs them (kit/judges.py). ``launch``: kit.config.Judges (None: its
    defaults and the environment)."""
    from kit.subjects import worth_forking

    grade_ids = list(grade_ids)
    heavy = any(worth_forking(plans().get(g, {}).get("harness", [])) for g in grade_ids)
    launch = launch or Judges()
    judges.warm(grade_ids, env=_env(""), subjects=heavy, fork=launch.launch == "fork")


def judge_env(base: dict | None = None) -> dict:
    """The environment judges (and their zygotes) start from, ``base`` (default: ours) made a
    grading's: a fixed hash seed, one OpenMP thread (a zygote that imported torch with more would
    have threads, and refuse to fork), no Jupyter variables."""
    return _env("", base)


def _env(token: str, base: dict | None = None) -> dict:
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if not k.startswith(("NBGRADER_", "JPY_", "JUPYTER"))}
    env.update(
        STEADY_ENV,
        PYTHONPATH=ROOT,
        HYPOTHESIS_PROFILE="grading",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        CH13_JOB=token,
        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
    )
    return env


def _compiler(info: dict) -> dict:
    """For a CUDA cell's judge: this process's shared kernel compiler (kit/kernel_compiler.py)."""
    if "kit.harnesses.cuda_check" not in info.get("harness", ()):
        return {}
    from kit import kernel_compiler

    return {kernel_compiler.ENV: kernel_compiler.shared_socket()}


def grade_cell(
    grade_id: str,
    source: str | None,
    *,
    timeout_s: float | None = None,
    gpu: bool = False,
    sandbox: bool = True,
    untouched: bool = False,
    limits: Sandbox | None = None,
    launch: Judges | None = None,
    feedback: Feedback | None = None,
) -> Verdict:
    """Run the grader for ``grade_id`` on ``source`` (None: the answer cell is missing;
    ``untouched``: it is still the release's stub, so there is nothing to run). ``limits`` and
    ``launch``: kit.config's knobs, as ExternalGrade read them from nbgrader's config (None: their
    defaults and the environment); passed on explicitly to the watchdog and the judge."""
    info = plan(grade_id)
    planned = info["tests"]
    if source is None:
        return Verdict(
            grade_id,
            [_missing(t, SAY("missing")) for t in planned],
            problem=SAY("no_cell", grade_id=grade_id),
        )
    if untouched:
        return Verdict(grade_id, [_missing(t, SAY("stub")) for t in planned])
    timeout_s = timeout_s or info.get("timeout_s") or DEFAULT_TIMEOUT_S
    limits, launch, feedback = limits or Sandbox(), launch or Judges(), feedback or Feedback()
    work = tempfile.mkdtemp(prefix=f"ch13-grade-{grade_id}-")
    started = time.time()
    token = new_token()
    uid = sandbox_uid(token) if sandbox else None
    key = new_token().encode()
    watchdog = Watchdog(token, uid, limit_mb=limits.job_memory_mb, max_processes=limits.job_processes)
    try:
        os.chmod(work, 0o755)
        answer = os.path.join(work, "answer.py")
        results_file = os.path.join(work, "results.jsonl")
        with open(answer, "w", encoding="utf-8") as f:
            f.write(source)
        open(results_file, "w").close()
        # The judge: trusted code only (the grader, hypothesis, the hidden data). It runs the
        # student's cell in a subject process of its own, sandboxed (kit/judge.py, kit/subject.py).
        argv = (
            [grade_id, answer, results_file]
            + (["--gpu"] if gpu else [])
            + (["--course", os.getcwd(), *limits.sandbox_args()] if sandbox else ["--no-sandbox"])
            + ["--budget", f"{timeout_s:g}"]
        )
        from kit.sandbox import make_kit_reachable

        make_kit_reachable()  # the interpreter and the kit, reachable from inside the sandbox
        # Output goes to a file, never into this process's memory: a student who prints gigabytes
        # is stopped by the sandbox's file-size limit, and only the tail is ever read back.
        log = work + ".output.log"  # beside the work folder, not copied into the sandbox
        # TMPDIR: the subjects' folders and logs live inside ours, removed below even when the
        # judge itself was killed (a watchdog kill, a hang)
        judge = judges.start(
            argv,
            env={**_env(token), "TMPDIR": work, LANG_ENV: feedback.language, **_compiler(info)},
            cwd=ROOT,
            log=log,
            key=key,
            gpu=gpu,
            fork=launch.launch == "fork",
        )
        watchdog.start()
        try:
            # The judge's own guard counts the subject's CPU time; this wall-clock one only ends a
            # judge that outlives it (kit/judge.py: BACKSTOP times the cell's budget).
            code = judge.wait(timeout=timeout_s * BACKSTOP + 60)
            problem = "" if code == 0 else _death(code, _tail(log))  # a Both, each language's own
        except subprocess.TimeoutExpired:
            kill_job(token, uid)
            judge.kill()
            judge.wait()
            problem = SAY.both("timeout", s=f"{timeout_s:g}")
        if watchdog.stop():
            problem = watchdog.why
        return _read(grade_id, planned, results_file, problem, key)
    finally:
        watchdog.stop()
        kill_job(token, uid)
        if os.environ.get("CH13_TIMINGS"):
            _timing(grade_id, started, os.path.join(work, "results.jsonl.timing"))
        shutil.rmtree(work, ignore_errors=True)
        if os.path.exists(work + ".output.log"):
            os.remove(work + ".output.log")


def record_timing(item: dict) -> None:
    """Opt-in timing record for bench/bench_class.py: with CH13_TIMINGS=<path> set, one JSON line
    per graded cell (here) and per notebook execution (kit/execute.py) is appended to <path>."""
    line = (json.dumps({"pid": os.getpid(), "t": time.time(), **item}) + "\n").encode()
    fd = os.open(os.environ["CH13_TIMINGS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)  # one write of one line: concurrent nbgrader processes never interleave
    finally:
        os.close(fd)


def _timing(grade_id: str, started: float, judge_file: str) -> None:
    """The judge's own figures (graders/__main__.py writes them when CH13_TIMINGS is set): CPU-seconds
    of the judge and the subjects it waited for, when its first test began, subjects started."""
    wall = time.time() - started
    try:
        with open(judge_file, encoding="utf-8") as f:
            judge = json.load(f)
    except (OSError, ValueError):
        judge = {}  # killed before it could write them
    first = judge.get("first_test")
    record_timing(
        {
            "kind": "grade",
            "grade_id": grade_id,
            "wall": wall,
            "judge_start_s": (first - started) if first else wall,
            "cpu": judge.get("cpu"),
            "cpu_start": judge.get("cpu_first", judge.get("cpu")),
            "subject_starts": judge.get("subject_starts", 0),
        }
    )


def _tail(path: str, size: int = 4096) -> bytes:
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - size))
        return f.read()


def _death(returncode: int, output: bytes) -> Both:
    """Why the judge ended without a verdict for every test (its output's tail as it is)."""
    if returncode < 0:
        return SAY.both("killed", n=-returncode)
    tail = output.decode("utf-8", "replace").strip().splitlines()[-3:]
    return SAY.both("exited", code=returncode, tail=": " + " | ".join(tail) if tail else "")


def _missing(test: dict, why: str) -> Result:
    return Result.missing(test["test"], test["max_points"], why)


def _png(picture) -> str:
    """A base64 PNG from the judge's result line, or "" (anything else is dropped)."""
    import base64
    import binascii

    if type(picture) is not str or not picture or len(picture) > 600_000:
        return ""
    try:
        raw = base64.b64decode(picture, validate=True)
    except (binascii.Error, ValueError):
        return ""
    return picture if raw.startswith(b"\x89PNG\r\n\x1a\n") else ""


def _read(grade_id: str, planned: list[dict], results_file: str, problem: Both | str, key: bytes) -> Verdict:
    """The verdicts the judge sealed; ``problem`` (a Both, or "" when none): why it ended early."""
    if isinstance(problem, str) and problem:
        problem = Both(problem, problem)
    got: dict[str, Result] = {}
    try:
        with open(results_file, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    names = {t["test"]: t for t in planned}
    forged = 0
    flags: list[str] = []
    refused: list[str] = []
    for raw in lines:
        try:
            wrapped = json.loads(raw)
            line, mac = wrapped["line"], wrapped["mac"]
            if not hmac.compare_digest(mac, hmac.new(key, line.encode(), hashlib.sha256).hexdigest()):
                raise ValueError
            item = json.loads(line)
        except (ValueError, KeyError, TypeError, AttributeError):
            forged += 1
            continue
        if isinstance(item, dict) and isinstance(item.get("flags"), list):
            flags = [str(f)[:300] for f in item["flags"][:20]]
            continue
        if isinstance(item, dict) and isinstance(item.get("refused"), list):
            refused = [str(f)[:300] for f in item["refused"][:20]]
            continue
        # Only well-formed results for planned tests count, each once, never above its points.
        if not isinstance(item, dict) or item.get("test") not in names or item["test"] in got:
            continue
        got[item["test"]] = Result.read(item, names[item["test"]]["max_points"], _png(item.get("picture")))
    if forged:
        note = SAY.both("forged", n=forged)
        problem = Both(*(f"{said}; {more}" for said, more in zip(problem, note))) if problem else note
    if not problem and len(got) < len(planned):
        problem = SAY.both("ended")
    why = SAY("no_verdict", why=problem or SAY.both("not_run"))  # each language's sentence, its own why
    results = [got.get(t["test"]) or _missing(t, why) for t in planned]
    return Verdict(grade_id, results, str(problem), flags, refused)
