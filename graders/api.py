"""The interface every grader implements.

A grader is a list of named tests with points. Each test gets the student's answer cell as an
:class:`Answer` and either returns (passed) or raises :class:`Fail` with a message that says what
went wrong and, where there is one, the smallest failing input. Budgets are counted in examples,
schedules or steps so that the same submission gets the same verdict on every run; the only
wall-clock limit is the runner's guard against hangs.
"""
from __future__ import annotations

import dataclasses
import linecache
import sys
import traceback
import types
from collections.abc import Callable, Iterator


class Fail(Exception):
    """A test failed for a reason the student can act on."""

    def __init__(self, message: str, example: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.example = example


@dataclasses.dataclass(frozen=True)
class Result:
    test: str
    points: float          # points earned
    max_points: float
    passed: bool
    message: str = ""      # why it failed (empty when passed)
    example: str = ""      # the smallest failing input, replayable by the student

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Test:
    name: str
    points: float
    func: Callable[["Answer"], None]
    doc: str


class Answer:
    """The source of one answer cell, loadable as a fresh module as often as a test needs."""

    def __init__(self, grade_id: str, source: str) -> None:
        self.grade_id = grade_id
        self.source = source
        self.filename = f"<answer cell {grade_id}>"
        self._count = 0
        self._module: types.ModuleType | None = None
        self._code = None      # compiled once: schedulers load the cell thousands of times
        # Tracebacks and inspect.getsource quote the student's own lines.
        linecache.cache[self.filename] = (len(source), None, source.splitlines(True), self.filename)

    def load(self) -> types.ModuleType:
        """Execute the cell in a new module (registered in sys.modules so pickling works)."""
        self._count += 1
        name = f"answer_{self.grade_id}_{self._count}"
        module = types.ModuleType(name)
        module.__file__ = self.filename
        sys.modules[name] = module
        if self._code is None:
            self._code = compile(self.source, self.filename, "exec")
        exec(self._code, module.__dict__)
        return module

    @property
    def module(self) -> types.ModuleType:
        """One shared module for tests that need no fresh state."""
        if self._module is None:
            self._module = self.load()
        return self._module


def student_traceback(exc: BaseException, filename: str) -> str:
    """The traceback of ``exc`` cut down to the frames in the student's cell (or the last frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename == filename] or frames[-1:]
    lines = [f"  line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in own]
    return "\n".join(lines + [f"{type(exc).__name__}: {exc}"])


class Grader:
    """The tests of one answer cell. Register tests with ``@grader.test(points)``."""

    def __init__(self, grade_id: str, *, timeout_s: float = 120.0) -> None:
        self.grade_id = grade_id
        self.timeout_s = timeout_s      # the runner's hang guard for the whole cell, not a budget
        self.tests: list[Test] = []

    def test(self, points: float, name: str | None = None):
        def register(func):
            self.tests.append(Test(name or func.__name__, float(points), func,
                                   (func.__doc__ or "").strip()))
            return func
        return register

    @property
    def max_points(self) -> float:
        return sum(t.points for t in self.tests)

    def plan(self) -> dict:
        return {"grade_id": self.grade_id, "timeout_s": self.timeout_s,
                "tests": [{"test": t.name, "max_points": t.points} for t in self.tests]}

    def run(self, source: str) -> Iterator[Result]:
        """Run every test on ``source``; each result is yielded as soon as it is known."""
        answer = Answer(self.grade_id, source)
        for t in self.tests:
            yield run_test(t, answer)


def run_test(t: Test, answer: Answer) -> Result:
    try:
        t.func(answer)
    except Fail as f:
        return Result(t.name, 0.0, t.points, False, f.message, f.example)
    except NotImplementedError:
        return Result(t.name, 0.0, t.points, False,
                      "not implemented yet: the stub still raises NotImplementedError")
    except (KeyboardInterrupt, SystemExit, GeneratorExit) as e:
        return Result(t.name, 0.0, t.points, False,
                      f"your code raised {type(e).__name__}, which ends the grading of this test")
    except BaseException as e:      # the student's code crashed: show where, in their lines
        return Result(t.name, 0.0, t.points, False,
                      "your code raised an exception:\n" + student_traceback(e, answer.filename))
    return Result(t.name, t.points, t.points, True)


def _falsifying(e: BaseException) -> str:
    """The shrunk example hypothesis attached to ``e``, as ``name=value`` lines."""
    for note in getattr(e, "__notes__", []):
        for prefix in ("Falsifying example: ", "Falsifying explicit example: ", "Failing test case: "):
            if note.startswith(prefix):
                call = note[len(prefix):]
                inner = call[call.find("(") + 1: call.rfind(")")]
                return "\n".join(line.strip().rstrip(",") for line in inner.splitlines() if line.strip())
    return ""


def check_property(given_test: Callable[[], None]) -> None:
    """Run a ``@hypothesis.given`` test; on failure raise Fail with the shrunk example.

    The property should ``raise Fail(message)`` (or an AssertionError) on a bad example;
    hypothesis shrinks it and the falsifying example becomes the Fail's ``example``.
    """
    try:
        given_test()
    except NotImplementedError:
        raise
    except Fail as f:
        raise Fail(f.message, _falsifying(f) or f.example) from None
    except Exception as e:      # an AssertionError, or the student's code crashed on an example
        example = _falsifying(e)
        if isinstance(e, AssertionError):
            raise Fail(str(e) or "a property failed", example) from None
        frames = traceback.extract_tb(e.__traceback__)
        own = [f for f in frames if f.filename.startswith("<answer cell")] or frames[-1:]
        where = "".join(f"\n  line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in own)
        raise Fail(f"your code raised {type(e).__name__}: {e}{where}", example) from None
