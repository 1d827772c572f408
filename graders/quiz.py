"""Hidden grader of the quiz: 2 points per question, each checked in its own test."""

from ch13lib.cell import missing, not_defined
from ch13lib.lang import Messages
from ch13lib.quiz import HINT, canonical
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
# What this grader says, in the course's language (ch13lib/lang.py); EXPLAIN: why each right answer is right.
EXPLAIN = Messages(
    q1=(
        "Amdahl 定律: S = 1 / ((1 - p) + p / n), 其中 p = 0.9, n = 10; 10% 的串行部分把加速比限制在远低于 10 的水平",
        "Amdahl: S = 1 / ((1 - p) + p / n) with p = 0.9, n = 10; the serial 10% caps the speedup well below 10",
    ),
    q2=(
        "死锁 (deadlock): 所有线程永远互相等待; 活锁 (livelock): 所有线程不停地相互响应, 却没有谁取得进展; "
        "饥饿 (starvation): 其他线程在运行, 某个线程却一再被跳过",
        "deadlock: everyone waits forever; livelock: everyone keeps reacting, nobody progresses; "
        "starvation: one thread is passed over again and again while others run",
    ),
    q3=(
        "线程每 32 个组成一个 warp (调度单位), 若干 warp 组成一个线程块 (块内共享 shared memory, 可以 "
        "__syncthreads), 若干线程块组成一次核函数启动的网格 (grid)",
        "threads are grouped 32 to a warp (the scheduling unit), warps make a block (which shares "
        "shared memory and can __syncthreads), blocks make the grid of one kernel launch",
    ),
    q4=(
        "AllReduce (全规约) 把结果留在每个 rank 上; Reduce (规约) 只把结果留在根 rank 上",
        "AllReduce leaves the result on every rank; Reduce leaves it on the root only",
    ),
    q5=(
        "70e9 个参数 x 2 字节 (FP16) = 140 GB; ZeRO-3 把它们分片到 8 块 GPU 上; DDP 在每块 GPU 上都保存全部 140 GB",
        "70e9 parameters x 2 bytes (FP16) = 140 GB; ZeRO-3 shards them over 8 GPUs; DDP keeps all 140 GB on each",
    ),
)
M = Messages(
    unanswered=("`{name}` 尚未作答", "`{name}` is not answered yet"),
    not_plain=(
        "答案必须是普通数据 (数字, 字符串, 列表, 字典), 而不是 {type}",
        "an answer must be plain data (numbers, strings, lists, dicts), not {type}",
    ),
    form=("{name} 不是题目要求的格式: {hint}", "{name} does not have the form the question asks for: {hint}"),
    wrong=("{name} 不对。原因: {why}。", "{name} is not right. Why: {why}."),
)


def _value(answer: Answer, name: str):
    """The cell's value of ``name``, as plain data sent by the subject (kit/subject.py)."""
    info = answer.get(name)[name]
    if missing([name], {name: info}, need_callable=False):
        raise Fail(not_defined(name, "quiz"))
    if info.get("type") == "ellipsis" or ("value" in info and info["value"] is None):
        raise Fail(M("unanswered", name=name))
    if "value" not in info:
        raise Fail(M("not_plain", type=info.get("type")))
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
    raise Fail(M("not_plain", type=type(value).__name__))


def _check(answer: Answer, name: str) -> None:
    got = _norm(_value(answer, name))
    try:  # the same canonical form (rounding, case) as the student's self-check, so they agree
        right = canonical(name, got) == canonical(name, ANSWERS[name])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        raise Fail(M("form", name=name, hint=HINT.both(name))) from None
    if not right:
        raise Fail(M("wrong", name=name, why=EXPLAIN.both(name)))


for _name in sorted(ANSWERS):

    def _test(answer: Answer, name=_name) -> None:
        _check(answer, name)

    _test.__name__ = _name
    grader.test(points=2, name=_name)(_test)
