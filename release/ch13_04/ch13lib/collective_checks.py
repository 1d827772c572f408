"""Self-checks for notebook 03 (collectives): quick, printed ✔/✘, each failure replayable.

    check_ring_all_reduce(ring_all_reduce)       # exercise all_reduce
    check_average_gradients(average_gradients)   # exercise ddp_average (starts 2 real gloo processes)
    check_rs_ag_all_reduce(rs_ag_all_reduce)     # exercise rs_ag_all_reduce
    check_case(ring_all_reduce, world_size=4, shape=(5,), dtype="float32", seed=0, policy="random")

They run on the same simulated process group as the hidden graders (ch13lib.procgroup), on
fewer cases; the graders add hypothesis-generated cases and a real torch.distributed world.
"""

from __future__ import annotations

import inspect
import textwrap
import types

from ch13lib import grading
from ch13lib.cell import cell_source, rank_copies
from ch13lib.collective_cases import Case, SimFailure, messages, ring_bound, run_on_sim, traffic_problem, verdict
from ch13lib.lang import FRAME, Messages, Once

# What the self-checks say, in the student's language (ch13lib/lang.py): each check's title, and
# the lines around the problems (which say themselves: ch13lib.collective_cases, collective_ddp).
M = Messages(
    q_world1=("world size 为 1 (无需交换数据)", "world size 1 (nothing to exchange)"),
    q_two=("2 个 rank, 4 个元素", "2 ranks, 4 elements"),
    q_three=(
        "3 个 rank, 一个 2×5 的 float64 张量, 轮转 (round-robin) 调度",
        "3 ranks, a 2×5 float64 tensor, round-robin schedule",
    ),
    q_fewer=("4 个 rank, int64, 3 个元素 (比 rank 少)", "4 ranks, int64, 3 elements (fewer than ranks)"),
    q_uneven=("4 个 rank, 5 个元素 (不能平均切分)", "4 ranks, 5 elements (an uneven split)"),
    q_scalar=("8 个 rank, 一个 0 维张量", "8 ranks, a 0-d tensor"),
    q_random=("5 个 rank, 3×7 个元素, 随机调度", "5 ranks, 3×7 elements, random schedule"),
    bandwidth=(
        "带宽: 没有哪个 rank 发送得比环形算法多 (4 个 rank, 100 个元素)",
        "bandwidth: no rank sends more than a ring (4 ranks, 100 elements)",
    ),
    picture=(
        "第一个 ✘ 运行中的消息 (每个 rank 一行, 每次发送一格):",
        "The messages of the first ✘ run, drawn (one row per rank, one cell per send):",
    ),
    sums=("{label}: 每个 rank 都存有和", "{label}: every rank holds the sum"),
    sent=(
        "每个 rank 发送的元素数: {sent}; 环的上界 2·(W−1)·⌈n/W⌉ = {bound}",
        "elements sent per rank: {sent}; a ring's bound 2·(W−1)·⌈n/W⌉ = {bound}",
    ),
    ddp=(
        "{w} 个 rank 的手写 DDP 与单进程训练一致 (2 步, 一层冻结)",
        "{w}-rank DDP by hand matches single-process training (2 steps, one frozen layer)",
    ),
)

_QUICK = [
    ("q_world1", Case(1, (5,), "float32", 1)),
    ("q_two", Case(2, (4,), "float32", 2)),
    ("q_three", Case(3, (2, 5), "float64", 3, "round_robin")),
    ("q_fewer", Case(4, (3,), "int64", 4, "random", 1)),
    ("q_uneven", Case(4, (5,), "float32", 5, "random", 2)),
    ("q_scalar", Case(8, (), "float32", 6)),
    ("q_random", Case(5, (3, 7), "float64", 7, "random", 3)),
]
_BANDWIDTH = Case(4, (100,), "float32", 8)


def _cell(fn):
    return types.SimpleNamespace(module=types.SimpleNamespace(**{fn.__name__: fn}))


def _api(fn) -> str:
    return "collectives" if "rs_ag" in getattr(fn, "__name__", "") else "p2p"


def _run(fn, case: Case, api: str, bandwidth: bool = False, drawn: list | None = None) -> str | None:
    """None if right; otherwise the reason (and into ``drawn``, the messages of that run for its
    picture). NotImplementedError passes through."""
    try:
        fns = rank_copies(_cell(fn), fn.__name__, case.world_size)  # each rank its own module, as graded
        inputs, outputs, world = run_on_sim(fns, case, api=api, fn_name=fn.__name__, guard_s=10)
    except SimFailure as e:
        return str(e)
    problem = verdict(case, inputs, outputs, fn.__name__)
    if problem is None and bandwidth:
        problem = traffic_problem(case, [t.sent_elements for t in world.traffic], fn.__name__)
    if problem and drawn is not None and not drawn:
        drawn.append((messages(world, outputs), case, problem))
    return problem


def _show_ring(drawn: list) -> None:
    """The first failing run's messages as a picture, under the text."""
    msgs, case, problem = drawn[0]
    if not msgs:
        return
    try:
        from ch13lib.pictures import ring, show

        print(M("picture"))
        show(ring(msgs, case.world_size, case.numel, problem))
    except Exception:  # noqa: BLE001 - no matplotlib: the text says it all
        pass


def _check(fn, api: str) -> bool:
    if grading():
        print(FRAME("skipped"))
        return True
    ok, drawn, once = True, [], Once()  # cases that fail for one reason explain it once
    try:
        for title, case in _QUICK + [("bandwidth", _BANDWIDTH)]:
            problem = _run(fn, case, api, bandwidth=case is _BANDWIDTH, drawn=drawn)
            print(("✔ " if problem is None else "✘ ") + M(title))
            if problem:
                ok = False
                print(textwrap.indent(once(problem), "    "))
    except NotImplementedError:
        print(FRAME("stub"))
        return False
    print(FRAME("passed") if ok else FRAME("fix"))
    if drawn:
        _show_ring(drawn)
    return ok


def check_ring_all_reduce(fn) -> bool:
    """Exercise all_reduce: sums, world size 1, tiny and uneven tensors, and a ring's traffic."""
    return _check(fn, "p2p")


def check_rs_ag_all_reduce(fn) -> bool:
    """Exercise rs_ag_all_reduce: the same cases, with comm offering only the two collectives."""
    return _check(fn, "collectives")


def replayed(run):
    """What ``run()`` returned for a replayed case (check_case and its kin), or None after printing
    why there is nothing to judge: the stub, or a run the simulator stopped (a deadlock, an error)."""
    try:
        return run()
    except NotImplementedError:
        print(FRAME("stub"))
    except SimFailure as e:
        print("✘ " + str(e))
    return None


def check_case(
    fn,
    world_size: int,
    shape: tuple = (4,),
    dtype: str = "float32",
    seed: int = 0,
    policy: str = "stay",
    schedule_seed: int = 0,
) -> bool:
    """Replay one case exactly (the graders print this call for every failure) and show its traffic."""
    case = Case(world_size, tuple(shape), dtype, seed, policy, schedule_seed)

    def run():
        fns = rank_copies(_cell(fn), fn.__name__, case.world_size)
        return run_on_sim(fns, case, api=_api(fn), fn_name=fn.__name__, guard_s=10)

    seen = replayed(run)
    if seen is None:
        return False
    inputs, outputs, world = seen
    problem = verdict(case, inputs, outputs, fn.__name__)
    sent = [t.sent_elements for t in world.traffic]
    print(("✔ " if problem is None else "✘ ") + (problem or M("sums", label=case.label())))
    bound = ring_bound(world_size, case.numel)
    # Never a ✔ beside traffic the graders reject: over the bound, or fewer than n from some rank.
    traffic = traffic_problem(case, sent, fn.__name__)
    print(("✔ " if traffic is None else "✘ ") + M("sent", sent=sent, bound=bound))
    if traffic:
        print(textwrap.indent(traffic, "    "))
    return problem is None and traffic is None


# 3 ranks (odd): a divisor hard-coded to 2 cannot pass; a batch of 6 splits evenly over 1, 2 and 3.
DDP_SELF_CHECK = {"seed": 1, "d_in": 3, "hidden": 4, "batch": 6, "steps": 2, "lr": 0.1, "frozen": True}


def check_average_gradients(fn, world_size: int = 3) -> bool:
    """Exercise ddp_average: trains a tiny model on `world_size` real gloo processes (started as
    torchrun would, ~3 s) with your function, and compares every step with single-process training."""
    if grading():
        print(FRAME("skipped"))
        return True
    source = textwrap.dedent(inspect.getsource(fn))
    if "raise NotImplementedError" in source:
        print(FRAME("stub"))
        return False
    try:  # the whole cell: the function's own imports and helpers (``from ... import x as y``) too
        source = cell_source(fn)
    except ValueError:
        pass
    source = "import torch\nimport torch.distributed as dist\n\n" + source
    from ch13lib.collective_ddp import compare
    from ch13lib.collective_launch import launch

    results = launch(
        world_size,
        "ch13lib.collective_ddp:observe_ddp_rank",
        {
            "source": source,
            "name": "ddp_self_check",
            "function": fn.__name__,
            "device": "cpu",
            "scenarios": [DDP_SELF_CHECK],
        },
    )
    problems = []
    for r, res in enumerate(results):
        if "error" in res:
            problems.append(f"rank {r}: {res['error']}")  # the rank's own text, in the language in force
            continue
        seen = res["scenarios"][0]
        problem = seen["crash"] or compare(DDP_SELF_CHECK, world_size, seen["steps"])
        if problem:
            problems.append(f"rank {r}, {problem['text']}")
    print(("✔ " if not problems else "✘ ") + M("ddp", w=world_size))
    for p in problems[:2]:
        print(textwrap.indent(p, "    "))
    return not problems
