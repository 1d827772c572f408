"""Hidden grader of the quiz: 2 points per question, each checked in its own test."""

from ch13lib.cell import missing, not_defined
from ch13lib.quiz import HINTS, canonical
from graders.api import Answer, Fail, Grader

grader = Grader("quiz", timeout_s=20)

P, N = 0.9, 10
ANSWERS = {  # the self-check's digests (ch13lib/quiz.py) are made from these; a kit test keeps them in step
    "q1": 1 / ((1 - P) + P / N),  # Amdahl: 5.26x
    "q2": {"deadlock": "B", "livelock": "A", "starvation": "C"},
    "q3": {"order": ["thread", "warp", "block", "grid"], "warp_size": 32, "shared_memory_scope": "block"},
    "q4": {"allreduce": "all", "reduce": "root"},
    "q5": 70e9 * 2 / 8 / 1e9,  # 140 GB of FP16 weights over 8 GPUs: 17.5 GB
}
EXPLAIN = {
    "q1": "Amdahl: S = 1 / ((1 - p) + p / n) with p = 0.9, n = 10; the serial 10% caps the speedup well below 10",
    "q2": "deadlock: everyone waits forever; livelock: everyone keeps reacting, nobody progresses; "
    "starvation: one thread is passed over again and again while others run",
    "q3": "threads are grouped 32 to a warp (the scheduling unit), warps make a block (which shares "
    "shared memory and can __syncthreads), blocks make the grid of one kernel launch",
    "q4": "AllReduce leaves the result on every rank; Reduce leaves it on the root only",
    "q5": "70e9 parameters x 2 bytes (FP16) = 140 GB; ZeRO-3 shards them over 8 GPUs; DDP keeps all 140 GB on each",
}


def _value(answer: Answer, name: str):
    """The cell's value of ``name``, as plain data sent by the subject (kit/subject.py)."""
    info = answer.get(name)[name]
    if missing([name], {name: info}, need_callable=False):
        raise Fail(not_defined(name, "quiz"))
    if info.get("type") == "ellipsis" or ("value" in info and info["value"] is None):
        raise Fail(f"`{name}` is not answered yet")
    if "value" not in info:
        raise Fail(f"an answer must be plain data (numbers, strings, lists, dicts), not {info.get('type')}")
    return info["value"]


def _norm(value):
    """Plain data, so a custom class with a clever __eq__ cannot pass."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return str.strip(str.lower(value))
    if isinstance(value, dict):
        return {str.strip(str.lower(str(k))): _norm(v) for k, v in dict.items(value)}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in list(value)]
    if hasattr(value, "dtype") and getattr(value, "shape", None) == ():  # a numpy scalar
        return float(value)
    raise Fail(f"an answer must be plain data (numbers, strings, lists, dicts), not {type(value).__name__}")


def _check(answer: Answer, name: str) -> None:
    got = _norm(_value(answer, name))
    try:  # the same canonical form (rounding, case) as the student's self-check, so they agree
        right = canonical(name, got) == canonical(name, ANSWERS[name])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        raise Fail(f"{name} does not have the form the question asks for: {HINTS[name]}") from None
    if not right:
        raise Fail(f"{name} is not right. Why: {EXPLAIN[name]}.")


for _name in sorted(ANSWERS):

    def _test(answer: Answer, name=_name) -> None:
        _check(answer, name)

    _test.__name__ = _name
    grader.test(points=2, name=_name)(_test)
