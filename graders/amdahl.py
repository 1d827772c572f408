"""Hidden grader of `amdahl` (06_quiz): amdahl_speedup(p, n) checked for its properties."""

import math

from hypothesis import given
from hypothesis import strategies as st

from ch13lib.lang import Messages
from graders.api import Answer, Fail, Grader, check_property
from kit.judge import Raised

grader = Grader("amdahl", timeout_s=20)

# What this grader says, in the course's language (ch13lib/lang.py).
M = Messages(
    not_float=(
        "amdahl_speedup({p}, {n}) 返回了 {type}, 而不是 float",
        "amdahl_speedup({p}, {n}) returned {type}, not a float",
    ),
    formula=(
        "amdahl_speedup({p}, {n}) = {got}, 但 Amdahl 定律给出的是 {want}",
        "amdahl_speedup({p}, {n}) = {got}, but Amdahl's law gives {want}",
    ),
    outside=(
        "amdahl_speedup({p}, {n}) = {s} 超出了 [1, min(n, 1/(1-p))]",
        "amdahl_speedup({p}, {n}) = {s} is outside [1, min(n, 1/(1-p))]",
    ),
    slower=(
        "核数增加后反而变慢了: S({p}, {n}) = {s} > S({p}, {n1}) = {s_more}",
        "more cores made it slower: S({p}, {n}) = {s} > S({p}, {n1}) = {s_more}",
    ),
    edge=("amdahl_speedup({p}, {n}) = {got}, 应为 {want}", "amdahl_speedup({p}, {n}) = {got}, expected {want}"),
    own_class=(
        "{type} (你自己的类, 它是 {builtin}, 不是内置的 ValueError: 调用者的 except ValueError 捕获不到它)",
        "{type} (a class of yours, a {builtin} and not the built-in ValueError: a caller's except ValueError "
        "never catches it)",
    ),
    wrong_error=(
        "amdahl_speedup({p}, {n}) 抛出了 {type}; 它应当抛出 ValueError",
        "amdahl_speedup({p}, {n}) raised {type}; it should raise ValueError",
    ),
    no_error=(
        "amdahl_speedup({p}, {n}) 返回了一个值; p 必须在 [0, 1] 内且 n >= 1 (否则抛出 ValueError)",
        "amdahl_speedup({p}, {n}) returned a value; p must be in [0, 1] and n >= 1 (ValueError)",
    ),
)
EXAMPLES = 300
fractions = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
cores = st.integers(min_value=1, max_value=10**6)


def spec(p: float, n: int) -> float:
    return 1.0 / ((1.0 - p) + p / n)


def _fn(answer: Answer):
    """A caller of the cell's amdahl_speedup, which runs in the subject process (plain data back)."""
    answer.require("amdahl_speedup", needs="`amdahl_speedup(p, n)`")
    return lambda p, n: answer.call("amdahl_speedup", p, n)


def _speedup(fn, p, n) -> float:
    s = fn(p, n)
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        raise Fail(M("not_float", p=repr(p), n=repr(n), type=type(s).__name__))
    return float(s)


@grader.test(points=2)
def matches_the_formula(answer: Answer) -> None:
    """S(n) = 1 / ((1 - p) + p / n) for every p in [0, 1] and n >= 1."""
    fn = _fn(answer)

    @given(fractions, cores)
    def prop(p, n):
        got, want = _speedup(fn, p, n), spec(p, n)
        if not math.isclose(got, want, rel_tol=1e-9):
            raise Fail(M("formula", p=repr(p), n=repr(n), got=repr(got), want=repr(want)))

    check_property(prop)


@grader.test(points=1)
def bounded_and_monotone(answer: Answer) -> None:
    """1 <= S <= min(n, 1/(1-p)), and more cores never slow the program down."""
    fn = _fn(answer)

    @given(fractions, cores)
    def prop(p, n):
        s, s_more = _speedup(fn, p, n), _speedup(fn, p, n + 1)
        cap = math.inf if p == 1 else 1 / (1 - p)
        if not (1 - 1e-12 <= s <= min(n, cap) * (1 + 1e-12)):
            raise Fail(M("outside", p=repr(p), n=repr(n), s=repr(s)))
        if s_more < s * (1 - 1e-12):
            raise Fail(M("slower", p=repr(p), n=n, s=repr(s), n1=n + 1, s_more=repr(s_more)))

    check_property(prop)


@grader.test(points=1)
def edge_cases(answer: Answer) -> None:
    """p = 0 gives 1 whatever n; p = 1 gives n; n = 1 gives 1."""
    fn = _fn(answer)
    for p, n, want in [(0.0, 64, 1.0), (1.0, 64, 64.0), (0.9, 1, 1.0), (1.0, 1, 1.0), (0.0, 1, 1.0)]:
        got = _speedup(fn, p, n)
        if not math.isclose(got, want, rel_tol=1e-12):
            raise Fail(M("edge", p=p, n=n, got=repr(got), want=want), f"p={p}, n={n}")


@grader.test(points=1)
def rejects_impossible_inputs(answer: Answer) -> None:
    """p outside [0, 1] or n < 1 raises ValueError."""
    fn = _fn(answer)
    for p, n in [(-0.1, 4), (1.5, 4), (0.5, 0), (0.5, -3)]:
        try:
            fn(p, n)
        except Raised as e:
            if e.is_a("ValueError"):
                continue
            if e.is_a("NotImplementedError") or e.flagged:
                raise
            first = (e.builtins or ["?"])[0]
            kind = e.type if e.type in e.builtins else M.both("own_class", type=e.type, builtin=first)
            raise Fail(M("wrong_error", p=p, n=n, type=kind), f"p={p}, n={n}") from None
        raise Fail(M("no_error", p=p, n=n), f"p={p}, n={n}")
