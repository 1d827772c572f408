"""Self-checks for notebook 07 (pipeline, tensor and ZeRO parallelism): quick, printed ✔/✘, replayable.

    check_gpipe_step(gpipe_step)        # exercise pipeline: gradients, loss, the schedule (and its chart)
    check_tp_mlp(tp_mlp)                # exercise tensor_parallel: output and communication
    check_zero_adam(ZeroAdam)           # exercise zero1: DDP + Adam, the state, the communication
    show_schedule(fn, stages=3, n_micro=4)   # the ranks × ticks chart of any gpipe_step-like function
    check_pipeline_case(gpipe_step, stages=3, n_micro=2, ...)   # replay one case (failure messages print it)
    check_tp_case(tp_mlp, world_size=2, ...), check_zero_case(ZeroAdam, world_size=3, ...)

They run on the same simulated process group as the hidden graders (ch13lib.procgroup) and compute
the expected values the same way (ch13lib.parallel_cases), on fewer cases; the graders add
hypothesis-generated cases and real torch.distributed worlds.
"""

from __future__ import annotations

import textwrap
import types

from ch13lib import grading
from ch13lib.collective_cases import SimFailure
from ch13lib.collective_checks import replayed
from ch13lib.lang import FRAME, Messages, Once
from ch13lib.parallel_cases import (
    PipeCase,
    TPCase,
    ZeroCase,
    pipeline_verdict,
    schedule_chart,
    schedule_problem,
    tp_traffic_problem,
    tp_verdict,
    zero_state_problem,
    zero_traffic_problem,
    zero_verdict,
)
from ch13lib.parallel_sim import observe_pipeline, observe_tp, observe_zero

# What the self-checks say, in the student's language (ch13lib/lang.py): the checks' titles and lines.
M = Messages(
    pipe_1=(
        "一个阶段 (P = 1, 没有消息), 2 个微批次, .grad 中已有内容",
        "one stage (P = 1, no messages), 2 micro-batches, .grad already holding something",
    ),
    pipe_2=("2 个阶段, 3 个微批次", "2 stages, 3 micro-batches"),
    pipe_3=(
        "3 个阶段, 2 个微批次, 交叉熵, .grad 已预先填充, 轮转调度",
        "3 stages, 2 micro-batches, cross-entropy, .grad pre-filled, round-robin schedule",
    ),
    pipe_4=("4 个阶段, 4 个各 1 行的微批次, 随机调度", "4 stages, 4 micro-batches of 1 row, random schedule"),
    grads_and_loss=("{title}: 梯度与损失", "{title}: gradients and loss"),
    one_step=("{P} 个阶段: 一次全批次步骤的梯度与损失", "{P} stages: gradients and loss of one full-batch step"),
    one_step_1=("{P} 个阶段: 一次全批次步骤的梯度与损失", "{P} stage: gradients and loss of one full-batch step"),
    no_longer=(
        "调度不长于 GPipe 的 2(m + P − 1) = {bound} 个 tick",
        "schedule no longer than GPipe's 2(m + P − 1) = {bound} ticks",
    ),
    bubble=(
        "{P} 个阶段, {m} 个微批次: {length} 个 tick (GPipe: 2(m + P − 1) = {bound}); "
        "{P} × {length} 个 rank-tick 中空闲 {idle} 个 = {share} 的气泡",
        "{P} stages, {m} micro-batches: {length} ticks (GPipe: 2(m + P − 1) = {bound}); "
        "idle {idle} of {P} × {length} rank-ticks = {share} bubble",
    ),
    pipe_right=("{case}: 梯度、损失和调度都正确", "{case}: right gradients, loss and schedule"),
    tp_1=("世界大小 1", "world size 1"),
    tp_2=("2 个 rank, float32", "2 ranks, float32"),
    tp_3=("3 个 rank, float64 (保持 dtype)", "3 ranks, float64 (the dtype is kept)"),
    tp_4=("4 个 rank, x 的形状为 (2, 2, 3), 随机调度", "4 ranks, x of shape (2, 2, 3), random schedule"),
    tp_5=("2 个 rank, x 的形状为 (2, 1, 2, 3)", "2 ranks, x of shape (2, 1, 2, 3)"),
    tp_title=("{title}: 输出, 以及一次 y 大小的 all_reduce", "{title}: output and one all_reduce of y's size"),
    tp_right=("{case}: 输出和通信都正确", "{case}: right output and communication"),
    no_calls=("没有通信调用", "no comm calls"),
    zero_1=("世界大小 1, float64", "world size 1, float64"),
    zero_2=("3 个 rank, N = 7 (不是 3 的倍数), float64", "3 ranks, N = 7 (not a multiple of 3), float64"),
    zero_3=("2 个 rank, float32, 梯度约为 1e-6", "2 ranks, float32, gradients of about 1e-6"),
    zero_4=("4 个 rank, N = 10, float64, 梯度约为 1e-6", "4 ranks, N = 10, float64, gradients of about 1e-6"),
    zero_5=("3 个 rank, N = 4160, float64", "3 ranks, N = 4160, float64"),
    zero_title=("{title}: 与 DDP + Adam 一致, 状态分片, 通信", "{title}: matches DDP + Adam, sharded state, traffic"),
    moved=(
        "{case}: rank {r} 改变了参数 {which} 的 shape、dtype、device 或 requires_grad: 模型的参数要保持这些不变; "
        "把收集到的值放进参数里 (在 torch.no_grad() 下 p.copy_(...), 或 p.data = 一个与该参数形状和 dtype 相同的视图)",
        "{case}: rank {r} changed the shape, dtype, device or requires_grad of parameters "
        "{which}: the model's parameters keep theirs; put the gathered values into them "
        "(p.copy_(...) under torch.no_grad(), or p.data = a view of the parameter's shape and dtype)",
    ),
    zero_right=("{case}: 与 DDP + Adam 一致", "{case}: matches DDP + Adam"),
)


def _cell(fn, name: str):
    return types.SimpleNamespace(module=types.SimpleNamespace(**{name: fn}))


def _report(title: str, problem: str | None, once: Once) -> bool:
    print(("✔ " if problem is None else "✘ ") + title)
    if problem:
        print(textwrap.indent(once(problem), "    "))
    return problem is None


def _run_all(checks) -> bool:
    if grading():
        print(FRAME("skipped"))
        return True
    ok, once = True, Once()  # cases that fail for one reason explain it once
    try:
        for title, check in checks:
            try:
                problem = check()
            except SimFailure as e:
                problem = str(e)
            ok &= _report(title, problem, once)
    except NotImplementedError:
        print(FRAME("stub"))
        return False
    print(FRAME("passed") if ok else FRAME("fix"))
    return ok


# ---- pipeline -----------------------------------------------------------------------------------
_PIPE = [  # (the title's key in M, the case)
    ("pipe_1", PipeCase(1, 2, 2, (3, 2), "mse", 1, True)),
    ("pipe_2", PipeCase(2, 3, 2, (3, 4, 2), "mse", 2)),
    ("pipe_3", PipeCase(3, 2, 1, (2, 3, 3, 3), "cross_entropy", 3, True, "round_robin")),
    ("pipe_4", PipeCase(4, 4, 1, (2, 2, 3, 2, 2), "mse", 4, False, "random", 1)),
]


def _pipe_checks(fn, case: PipeCase, schedule: bool = True) -> list:
    name = fn.__name__
    seen = {}

    def values():
        seen.update(observe_pipeline(_cell(fn, name), case, fn_name=name, guard_s=10))
        return pipeline_verdict(case, seen, name)

    def sched():
        if not seen:
            seen.update(observe_pipeline(_cell(fn, name), case, fn_name=name, guard_s=10))
        return schedule_problem(case, seen, name)

    out = [(M("one_step" if case.stages > 1 else "one_step_1", P=case.stages), values)]
    if schedule:
        out.append((M("no_longer", bound=case.bound()), sched))
    return out


def check_gpipe_step(fn, chart: bool = True) -> bool:
    """Exercise pipeline: .grad and the loss against a full-batch step, the schedule against
    2(m + P − 1) on 1-4 stages; then the ranks × ticks chart of 3 stages and 4 micro-batches."""
    checks = []
    for title, case in _PIPE:
        sub = _pipe_checks(fn, case)
        checks.append((M("grads_and_loss", title=M.both(title)), sub[0][1]))
        checks.append((sub[1][0].strip(), sub[1][1]))
    ok = _run_all(checks)
    if chart and ok and not grading():
        show_schedule(fn, stages=3, n_micro=4)
    return ok


def show_schedule(fn, stages: int = 3, n_micro: int = 4) -> float | None:
    """Run ``fn`` (a gpipe_step) on ``stages`` simulated ranks and print its schedule as ranks × ticks:
    F3 = the forward of micro-batch 3, B3 its backward, . = idle. Returns the length in ticks."""
    case = PipeCase(stages, n_micro, 1, (), "mse", 0)
    try:
        seen = observe_pipeline(_cell(fn, fn.__name__), case, fn_name=fn.__name__, guard_s=10)
    except SimFailure as e:
        print("✘ " + str(e))
        return None
    length = seen["length"]
    busy = sum(b - a for _, a, b, _, _ in seen["timeline"])
    idle = stages * length - busy
    share = f"{idle / (stages * length):.0%}"
    print(M("bubble", P=stages, m=n_micro, length=f"{length:g}", bound=case.bound(), idle=f"{idle:g}", share=share))
    print(schedule_chart(seen["timeline"], stages, length))
    _show_schedule(seen["timeline"], stages, length, case.bound())
    return length


def _show_schedule(timeline, stages, length, bound) -> None:
    try:
        from ch13lib.pictures import pipeline, show

        show(pipeline(timeline, stages, length, bound))
    except Exception:  # noqa: BLE001 - no matplotlib: the chart above says the same
        pass


def check_pipeline_case(fn, **case) -> bool:
    """Replay one case exactly (the graders print this call for every failure) and show its chart."""
    case = PipeCase(**case)
    seen = replayed(lambda: observe_pipeline(_cell(fn, fn.__name__), case, fn_name=fn.__name__, guard_s=10))
    if seen is None:
        return False
    problem = pipeline_verdict(case, seen, fn.__name__) or schedule_problem(case, seen, fn.__name__)
    print(("✔ " if problem is None else "✘ ") + (problem or M("pipe_right", case=case.label())))
    if problem is None or "schedule" not in problem:
        print(schedule_chart(seen["timeline"], case.stages, seen["length"]))
    _show_schedule(seen["timeline"], case.stages, seen["length"], case.bound())
    return problem is None


# ---- tensor parallelism -------------------------------------------------------------------------
_TP = [  # (the title's key in M, the case)
    ("tp_1", TPCase(1, (3,), 4, 4, 3, "float32", 1)),
    ("tp_2", TPCase(2, (3,), 4, 6, 3, "float32", 2)),
    ("tp_3", TPCase(3, (2,), 5, 6, 2, "float64", 3, "round_robin")),
    ("tp_4", TPCase(4, (2, 2), 3, 8, 4, "float32", 4, "random", 1)),
    ("tp_5", TPCase(2, (2, 1, 2), 3, 4, 2, "float64", 5)),
]


def _tp_check(fn, case: TPCase):
    def run():
        seen = observe_tp(_cell(fn, fn.__name__), case, fn_name=fn.__name__, guard_s=10)
        return tp_verdict(case, seen["outputs"], fn.__name__) or tp_traffic_problem(case, seen["calls"], fn.__name__)

    return run


def check_tp_mlp(fn) -> bool:
    """Exercise tensor_parallel: every rank's y against the unsharded MLP, and exactly one all_reduce."""
    return _run_all([(M("tp_title", title=M.both(t)), _tp_check(fn, c)) for t, c in _TP])


def check_tp_case(fn, **case) -> bool:
    """Replay one case exactly and print the comm calls each rank made."""
    case = TPCase(**case)
    seen = replayed(lambda: observe_tp(_cell(fn, fn.__name__), case, fn_name=fn.__name__, guard_s=10))
    if seen is None:
        return False
    problem = tp_verdict(case, seen["outputs"], fn.__name__) or tp_traffic_problem(case, seen["calls"], fn.__name__)
    print(("✔ " if problem is None else "✘ ") + (problem or M("tp_right", case=case.label())))
    for r, calls in enumerate(seen["calls"]):
        print(f"  rank {r}: " + (", ".join(f"{c['call']}({c['numel']} {c['dtype']})" for c in calls) or M("no_calls")))
    return problem is None


# ---- ZeRO-1 ---------------------------------------------------------------------------------------
_ZERO = [  # (the title's key in M, the case)
    ("zero_1", ZeroCase(1, ((3, 2), (2,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 1)),
    ("zero_2", ZeroCase(3, ((5,), (2,)), "float64", 3, 1e-2, (0.9, 0.999), 1e-8, 1.0, 2)),
    ("zero_3", ZeroCase(2, ((3, 3),), "float32", 3, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 3, "round_robin")),
    ("zero_4", ZeroCase(4, ((2, 3), (4,)), "float64", 2, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 4, "random", 2)),
    # N large enough that the state_dict's size tells a shard from the full moments
    ("zero_5", ZeroCase(3, ((64, 64), (64,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 5)),
]


def _zero_problem(cls, case: ZeroCase) -> str | None:
    name = cls.__name__
    # each step from a new run of the cell, as the grader's fresh processes take it: state kept
    # anywhere but the state_dict() is lost here too
    seen = observe_zero(_cell(cls, name), case, fn_name=name, guard_s=10, fresh_steps=True)
    problem = (
        zero_verdict(case, seen["steps"], name)
        or zero_state_problem(case, seen, name)
        or zero_traffic_problem(case, seen["calls"], name)
    )
    moved = [(r, m) for r, m in enumerate(seen["moved"]) if m]
    if problem is None and moved:
        problem = M("moved", case=case.label(), r=moved[0][0], which=moved[0][1])
    return problem


def check_zero_adam(cls) -> bool:
    """Exercise zero1: k steps against DDP + torch.optim.Adam, each taken by a new ZeroAdam that
    continues from the last one's state_dict(); state_numel() ≤ 2·⌈N/W⌉, and one
    reduce_scatter_tensor + one all_gather_into_tensor per step."""
    return _run_all([(M("zero_title", title=M.both(t)), (lambda c=c: _zero_problem(cls, c))) for t, c in _ZERO])


def check_zero_case(cls, **case) -> bool:
    """Replay one case exactly."""
    case = ZeroCase(**case)
    seen = replayed(lambda: [_zero_problem(cls, case)])
    if seen is None:
        return False
    (problem,) = seen
    print(("✔ " if problem is None else "✘ ") + (problem or M("zero_right", case=case.label())))
    return problem is None
