"""The interface every grader implements.

A grader is a list of named tests with points. Each test gets the student's answer cell as an
:class:`Answer` and either returns (passed) or raises :class:`Fail` with a message that says what
went wrong and, where there is one, the smallest failing input. Budgets are counted in examples,
schedules or steps so that the same submission gets the same verdict on every run; the only
wall-clock limit is the runner's guard against hangs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from hypothesis import HealthCheck, Phase, settings
from hypothesis._settings import local_settings

from ch13lib import cell
from ch13lib.lang import Messages
from graders._hidden import keyed_to
from kit.result import Result

# The judge's own sentences around a test's verdict, in the course's language (ch13lib/lang.py).
SAY = Messages(
    replaced=(
        "未评分: 你的代码替换了 {names}, 评分工具依赖它们 (不允许修改评分工具或它调用的库)。助教会复查。",
        "not graded: your code replaced {names}, which the grading harness relies on (monkeypatching the "
        "harness or the libraries it calls is not allowed). A TA will review it.",
    ),
    refused=(
        "未评分: 你的代码请求了 {what}, 没有哪个练习需要它 (沙箱拒绝了)。助教会复查。",
        "not graded: your code asked for {what}, which no exercise needs (the sandbox refused it). "
        "A TA will review it.",
    ),
    stub=(
        "尚未实现: 占位代码仍在抛出 NotImplementedError",
        "not implemented yet: the stub still raises NotImplementedError",
    ),
    ends=(
        "你的代码抛出了 {name}, 这会结束本测试的评分",
        "your code raised {name}, which ends the grading of this test",
    ),
    raised=("你的代码抛出了异常:", "your code raised an exception:"),
)
NOT_IMPLEMENTED = SAY("stub")

# Every test runs under these, set here in the judge: no profile that anything else loads can
# weaken the search (derandomized, no example database on disk, no deadline). No "explain" phase:
# after shrinking it runs a failing test up to 500 more times per argument, only to annotate the
# example with "or any other generated value"; each run is a request to the subject.
PINNED = settings(
    settings.get_profile("default"),
    phases=[p for p in Phase if p is not Phase.explain],
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)


class Fail(Exception):
    """A test failed for a reason the student can act on; ``picture``: a PNG that shows it
    (ch13lib/pictures.py), carried into the feedback beside the message."""

    def __init__(self, message: str, example: str = "", picture: bytes = b"") -> None:
        super().__init__(message)
        self.message = message
        self.example = example
        self.picture = picture


@dataclasses.dataclass(frozen=True)
class Test:
    name: str
    points: float
    func: Callable[["Answer"], None]
    doc: str


class Answer:
    """The judge's handle on one answer cell. The cell runs in a subject process (kit/subject.py);
    this object only asks it for plain data. Nothing here executes the student's code.

    ``gpu`` / ``device``: where this cell is graded, as its subject was started
    (``Grader.run(..., gpu=True)``, ``python -m graders --gpu``): ``"gpu"`` adds real CUDA and
    NCCL to the simulators. Tests read it here, never from the environment: importing a grader
    fixes no device, and one process may grade either."""

    def __init__(self, grade_id: str, source: str, subject) -> None:
        self.grade_id = grade_id
        self.source = source  # text only: read it, never execute it here
        self.filename = cell.filename(grade_id)
        self.subject = subject
        self.gpu = bool(subject.gpu)
        self.device = "gpu" if self.gpu else "cpu"

    def siblings(self, n: int) -> list:
        """``n`` more subjects of this cell, each its own process and sandbox (the ranks of a
        simulated world whose broker is the judge: they share no memory). Started when first
        asked, kept for the cell's later tests, closed with its subject."""
        while len(self.subject.group) <= n:
            self.subject.sibling().start()  # all at once: their sandboxes build side by side
        return self.subject.group[1 : n + 1]

    def fresh_siblings(self, n: int) -> list:
        """As :meth:`siblings`, every one a new process with a new sandbox (new /tmp, /dev/shm and
        namespaces where the tier has them): nothing the cell's earlier requests left in memory or
        on disk reaches them. The job's processes are stopped first (stopping one stops all)."""
        running = next((s for s in self.subject.group if s.proc is not None), None)
        if running is not None:
            running.stop()
        fresh = self.siblings(n)
        for s in fresh:  # all at once: their sandboxes build side by side
            s.start()
        return fresh

    def run_fresh(self, harness: str, *args, **kwargs):
        """As :meth:`run`, in a sibling subject (:meth:`siblings`): a process and sandbox that ran
        none of the cell's other requests, so nothing they left in memory or on disk reaches it
        (a resume from a checkpoint file must depend on the file alone)."""
        reply = self.siblings(1)[0].request("run", harness, args, kwargs)
        _flagged(reply)
        return reply.value

    def _ask(self, op: str, name: str | None = None, args=(), kwargs=None):
        reply = self.subject.request(op, name, args, kwargs)
        _flagged(reply)
        return reply.value

    def names(self) -> list[str]:
        """The public names the cell defines (runs the cell once in the subject)."""
        return list(self._ask("load"))

    def get(self, *names: str) -> dict:
        """name -> {"defined", "callable", "type", and "value" (plain data) or "unsendable"}."""
        return self._ask("get", None, names)

    def require(self, *names: str, needs="", need_callable: bool = True, cell_name: str = "") -> dict:
        """Fail unless every name is defined (and callable, unless not ``need_callable``) in the cell,
        with the one message for it (ch13lib/cell.py: ``not_defined``, whose ``needs`` are the
        contract's signatures; ``cell_name``: the cell it names, its grade_id by default). Returns
        what :meth:`get` said of the names."""
        info = self.get(*names)
        if absent := cell.missing(names, info, need_callable=need_callable):
            raise Fail(cell.not_defined(absent[0], cell_name or self.grade_id, needs))
        return info

    def call(self, name: str, *args, **kwargs):
        """``name(*args, **kwargs)`` in the subject; its return value as plain data."""
        return self._ask("call", name, args, kwargs)

    def run(self, harness: Callable | str, *args, **kwargs):
        """A public harness function of ch13lib (listed in its module's SUBJECT_API) on the cell,
        in the subject: ``harness(cell, *args, **kwargs)``; its return value as plain data."""
        if not isinstance(harness, str):
            harness = f"{harness.__module__}:{harness.__name__}"
        return self._ask("run", harness, args, kwargs)


def _flagged(reply) -> None:
    if reply.tampered:
        raise Fail(SAY("replaced", names=", ".join(f"`{c}`" for c in reply.tampered[:5])))
    if reply.refused:
        raise Fail(SAY("refused", what="; ".join(reply.refused[:3])))


class Grader:
    """The tests of one answer cell. Register tests with ``@grader.test(points)``.

    ``harness``: the public ch13lib modules whose SUBJECT_API functions the tests run on the cell
    (the subject imports them before the cell runs). ``timeout_s``: the cell's budget in CPU-seconds
    of the subject (and idle wall seconds), the hang guard, never a budget of the tests."""

    def __init__(self, grade_id: str, *, timeout_s: float = 120.0, harness: tuple[str, ...] = ()) -> None:
        self.grade_id = grade_id
        self.timeout_s = timeout_s
        self.harness = list(harness)
        self.tests: list[Test] = []

    def test(self, points: float, name: str | None = None):
        def register(func):
            self.tests.append(Test(name or func.__name__, float(points), func, (func.__doc__ or "").strip()))
            return func

        return register

    @property
    def max_points(self) -> float:
        return sum(t.points for t in self.tests)

    def plan(self) -> dict:
        return {
            "grade_id": self.grade_id,
            "timeout_s": self.timeout_s,
            "harness": self.harness,
            "tests": [{"test": t.name, "max_points": t.points} for t in self.tests],
        }

    def subject(self, source: str, **options):
        from kit.judge import Subject

        return Subject(self.grade_id, source, harness=self.harness, budget_s=self.timeout_s, **options)

    def run(self, source: str, subject=None, **options) -> Iterator[Result]:
        """Run every test on ``source`` (in a subject process); each result as soon as it is known.

        ``subject``: one already started for this cell (graders/__main__.py starts it before it
        imports the grader); otherwise ``options`` go to kit.judge.Subject (sandbox, gpu, course).
        The device is the subject's (``gpu=True``: real CUDA and NCCL too); tests read ``answer.gpu``."""
        subject = subject or self.subject(source, **options)
        answer = Answer(self.grade_id, source, subject)
        try:
            for t in self.tests:
                yield run_test(t, answer)
        finally:
            try:
                self.finish(subject)
            finally:
                subject.close()

    def finish(self, subject) -> None:
        """After the last test, before the subject is closed (a grader whose harness leaves
        something outside the subject's processes tidies it here)."""


PICTURE_CAP = 400_000  # bytes of PNG: a picture bigger than this is left out of the feedback


def _picture(png) -> str:
    import base64

    return base64.b64encode(png).decode("ascii") if type(png) is bytes and 0 < len(png) <= PICTURE_CAP else ""


def _raised_text(e) -> str:
    return SAY("raised") + "\n" + e.describe()


def run_test(t: Test, answer: Answer) -> Result:
    from kit.judge import Lost, Raised

    answer.subject.new_test()  # a refusal in the last test ends that test only
    try:
        # the judge's own hypothesis settings, whatever profile is loaded; hidden values of this cell's own
        with local_settings(PINNED), keyed_to(answer.source):
            t.func(answer)
    except Fail as f:
        return Result(t.name, 0.0, t.points, False, f.message, f.example, _picture(f.picture))
    except Lost as e:
        return Result(t.name, 0.0, t.points, False, str(e))
    except Raised as e:
        try:
            _flagged(e.reply)
        except Fail as f:
            return Result(t.name, 0.0, t.points, False, f.message)
        if e.type == "NotImplementedError":
            return Result(t.name, 0.0, t.points, False, SAY("stub"))
        if e.type in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
            return Result(t.name, 0.0, t.points, False, SAY("ends", name=e.type))
        if e.from_harness:
            return Result(t.name, 0.0, t.points, False, e.message)
        return Result(t.name, 0.0, t.points, False, _raised_text(e))
    return Result(t.name, t.points, t.points, True)


def _falsifying(e: BaseException) -> str:
    """The shrunk example hypothesis attached to ``e``, as ``name=value`` lines."""
    for note in getattr(e, "__notes__", []):
        for prefix in (
            "Falsifying example: ",
            "Falsifying explicit example: ",
            "Failing explicit example: ",
            "Failing test case: ",
        ):
            if note.startswith(prefix):
                call = note[len(prefix) :]
                inner = call[call.find("(") + 1 : call.rfind(")")]
                return "\n".join(line.strip().rstrip(",") for line in inner.splitlines() if line.strip())
    return ""


def check_property(given_test: Callable[[], None]) -> None:
    """Run a ``@hypothesis.given`` test; on failure raise Fail with the shrunk example.

    The property should ``raise Fail(message)`` (or an AssertionError) on a bad example;
    hypothesis shrinks it and the falsifying example becomes the Fail's ``example``. The cell's
    exceptions arrive as kit.judge.Raised; a lost subject (hang, crash) ends the test at once.
    """
    from kit.judge import Lost, Raised

    try:
        try:
            given_test()
        except BaseExceptionGroup as group:  # two distinct failures: report the first
            first = group.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
    except (Lost, NotImplementedError):
        raise
    except Raised as e:
        if e.type == "NotImplementedError" or e.flagged:
            raise
        message = e.message if e.from_harness else f"your code raised {e.describe()}"
        raise Fail(message, _falsifying(e)) from None
    except Fail as f:
        raise Fail(f.message, _falsifying(f) or f.example, f.picture) from None
    except AssertionError as e:  # a check of ch13lib may carry a picture of what it saw
        raise Fail(str(e) or "a property failed", _falsifying(e), _drawn(e)) from None


def _drawn(e: BaseException) -> bytes:
    try:
        picture = getattr(e, "picture", b"")
        return picture if type(picture) is bytes else b""
    except Exception:  # noqa: BLE001 - a picture is a bonus: never lose the verdict over one
        return b""
