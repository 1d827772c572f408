"""What the all-reduce graders share (all_reduce, rs_ag_all_reduce): cases, and the checks.

The judge never runs the answer. The subject runs it on the simulated process group, its ranks
threads (kit.harnesses.collective_cases.observe_sim): cheap, and what finds most wrong answers with their
smallest example, but ranks that share a process can share memory, so a pass there proves nothing.
What a test's pass rests on runs relayed: each rank a subject of its own (kit/subject.py running
kit.harnesses.collective_cases.rank_sim) and this judge the world's broker, which relays every message and
counts the traffic itself (ch13lib.procgroup.SimWorld.run_remote): a case per world size 2-8 after
the threads grid (relayed_grid), the edge cases, the bandwidth cases. On a real torch.distributed
world the subject starts the ranks (kit.harnesses.collective_launch.launch_cell) and sends back each
rank's tensor as plain data. Here the inputs are regenerated from the Case (make_inputs is
deterministic) and the verdict is reached: the exact sums (verdict), a ring's traffic
(traffic_problem). A relayed case's values are hidden (graders/_hidden.py): drawn under a key no
subject holds, each rank handed its own input, so that no rank can compute the others' inputs.

A private module (its name starts with "_"): not a grade_id of its own.
"""

import dataclasses
import types

import torch
from hypothesis import strategies as st

from ch13lib.collective_cases import (
    Case,
    error_both,
    joined,
    make_inputs,
    traffic_problem,
    uneven_note,
    verdict,
)
from ch13lib.lang import Messages, language
from ch13lib.procgroup import CommError, RankError, RemoteRankRaised, SimWorld
from graders._hidden import hidden
from graders.api import NOT_IMPLEMENTED, Answer, Fail, _flagged
from kit.harnesses.collective_cases import observe_sim
from kit.harnesses.collective_launch import launch_cell
from kit.judge import Raised, Stalled

# What these checks say themselves, in the course's language (ch13lib/lang.py); a replay line stays code.
M = Messages(
    malformed=(
        "{label}: 运行的报告传回时格式有误 (评分工具被干扰了?)",
        "{label}: the run's report came back malformed (the harness was interfered with?)",
    ),
    stalled=(
        "{label}: {s} 秒没有进展: rank {r} 一直在运行却不调用 comm (死循环?)",
        "{label}: no progress for {s} s: rank {r} runs without calling comm (an endless loop?)",
    ),
    rank_raised=("{label}: rank {r} 抛出了异常:", "{label}: rank {r} raised an exception:"),
    real_where=(
        "在真实的 {backend} 进程组上 ({world} 个进程, 像 torchrun 那样启动; 各用例的 world 是它们的子组)",
        "on a real {backend} process group ({world} processes started as torchrun starts them; case worlds are "
        "sub-groups of them)",
    ),
    world_malformed=(
        "{where}: 这个 world 的报告传回时格式有误 (评分工具被干扰了?)",
        "{where}: the world's report came back malformed (the harness was interfered with?)",
    ),
    rank_failed=("{where}, {label}: rank {r} 失败了:", "{where}, {label}: rank {r} failed:"),
    timeout_hint=(
        "(超时意味着各 rank 在永远地互相等待: 死锁, 或者某个 send 没有与之匹配的 recv)",
        "(a timeout means the ranks waited on each other forever: a deadlock, or a send with no matching recv)",
    ),
    stopped=(
        "{where}, {label}: 有一个 rank 在这个用例之前就停止了",
        "{where}, {label}: a rank stopped before this case",
    ),
    report_malformed=("{label}: 某个 rank 的报告传回时格式有误", "{label}: a rank's report came back malformed"),
    sim_first=(
        "没有在真实进程组上运行: 同一个用例在模拟器上就失败了, 在真实进程组上也会失败 (或挂起)。",
        "not run on a real process group: the same case fails on the simulator, and would fail (or hang) there too.",
    ),
)

# Imported by the subject before the cell runs (and watched by its tamper guard from then on).
HARNESS = ("kit.harnesses.collective_cases", "kit.harnesses.collective_launch", "ch13lib.procgroup")
REAL_TARGET = "kit.harnesses.collective_cases:run_real_cases"


@st.composite
def cases(draw, *, max_world: int = 8) -> Case:
    world = draw(st.integers(1, max_world))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    return Case(
        world,
        shape,
        draw(st.sampled_from(["float32", "float64", "int64"])),
        draw(st.integers(0, 2**16)),
        draw(st.sampled_from(["stay", "round_robin", "random"])),
        draw(st.integers(0, 2**16)),
    )


def grid() -> list[Case]:
    """A fixed grid before hypothesis: every world size 1-8 with n = 1, W-1, W, W+1, 2W+3, 37 elements
    (even and uneven splits, fewer elements than ranks), dtypes and policies taken in turn."""
    out, k = [], 0
    shapes = lambda w: [(1,), (max(w - 1, 1),), (w,), (w + 1,), (2 * w + 3,), (37,)]
    for w in range(1, 9):
        for shape in dict.fromkeys(shapes(w)):
            out.append(
                Case(
                    w,
                    shape,
                    ["float32", "float64", "int64"][k % 3],
                    100 + k,
                    ["stay", "round_robin", "random"][k % 3],
                    k,
                )
            )
            k += 1
    return out


def relayed_grid() -> list[Case]:
    """The grid's cases that also run relayed, one per world size 2-8, its size, dtype and schedule
    policy taken in turn (the threads grid runs them first)."""
    per_world: dict[int, list[Case]] = {}
    for c in grid():
        per_world.setdefault(c.world_size, []).append(c)
    return [per_world[w][w % len(per_world[w])] for w in range(2, 9)]


def require(answer: Answer, fn_name: str) -> None:
    """Fail unless the cell defines ``fn_name`` as a function (asked of the subject, not run)."""
    answer.require(fn_name, needs=f"`{fn_name}(tensor, comm)`")


RANK_SIM = "kit.harnesses.collective_cases:rank_sim"
STEP_S = 20.0  # CPU-seconds (or idle wall seconds) a rank may run between two comm calls


def _observe_threads(answer: Answer, case: Case, *, api: str, device: str, fn_name: str) -> tuple[list, list, list]:
    """The subject's run of the answer on ``case``, its ranks threads of the cell's process: (each
    rank's tensor after the call, elements sent, the messages for the picture of a failure)."""
    try:
        seen = answer.run(observe_sim, case, api=api, device=device, fn_name=fn_name)
    except Raised as e:
        if e.from_harness and not e.flagged:  # a deadlock, a crash, misuse of comm (SimFailure)
            raise Fail(e.message) from None
        raise
    outputs = seen.get("outputs") if isinstance(seen, dict) else None
    sent = seen.get("sent") if isinstance(seen, dict) else None
    if not (
        isinstance(outputs, list)
        and len(outputs) == case.world_size
        and all(isinstance(t, torch.Tensor) for t in outputs)
        and isinstance(sent, list)
        and len(sent) == case.world_size
        and all(type(n) is int for n in sent)
    ):
        raise Fail(M("malformed", label=case.label()))
    return outputs, sent, seen.get("messages")


def run_relayed(
    answer: Answer,
    target: str,
    case,
    world_size: int,
    kwargs: dict,
    *,
    fn_name: str,
    p2p: bool = True,
    collectives: bool = False,
    all_reduce: bool = False,
    note: str = "",
    shown=None,
    inputs=None,
    record_flow: bool = False,
) -> tuple[list, SimWorld]:
    """``case`` on a simulated world whose ranks are subject processes of their own (``target``, a
    talking harness of kit/harnesses, run as rank r with ``[case, r]`` and ``kwargs``) and whose broker is
    this judge (ch13lib.procgroup.SimWorld.run_remote). Returns (each rank's report, the world):
    the world's traffic, call log, sends and logical clock were observed here, from the messages
    alone. Ranks share no memory, so data cannot move between them but through the broker, and
    nothing of the world is in their reach. A failure is a Fail that says which rank, and how to
    replay it (``note``: added to a rank's traceback). ``shown``: the case as the ranks see it
    (default ``case``); ``inputs(r)``: rank r's own inputs, sent as the harness's ``inputs``;
    ``record_flow``: keep the world's data flow (SimWorld.flow)."""
    world = SimWorld(world_size, policy=case.policy, seed=case.schedule_seed, guard_s=3 * STEP_S)
    if record_flow:
        world.flow = []
    shown = case if shown is None else shown
    talks = [
        s.converse(target, [shown, r], kwargs if inputs is None else {**kwargs, "inputs": inputs(r)}, step_s=STEP_S)
        for r, s in enumerate(answer.siblings(world_size))
    ]
    replay = f"Replay: {case.replay(fn_name)}"

    def finish(r: int, reply):
        _flagged(reply)  # refused or tampered on rank r: not graded
        value = reply.value
        if type(value) is dict and type(value.get("raised")) is str:
            raise RemoteRankRaised(value["raised"])
        return value

    try:
        values = world.run_remote(talks, finish, p2p=p2p, collectives=collectives, all_reduce=all_reduce)
    except RankError as e:
        for reply in world.finals:  # a rank flagged before the world failed: that is the verdict
            if reply is not None and (reply.refused or reply.tampered):
                _flagged(reply)
        exc = e.exc
        if isinstance(exc, Fail):
            raise exc from None
        if isinstance(exc, Stalled):
            stalled = M("stalled", label=case.label(), s=f"{STEP_S:g}", r=e.rank)
            raise Fail(f"{stalled}\n{replay}") from None
        if isinstance(exc, RemoteRankRaised):
            raised = M("rank_raised", label=case.label(), r=e.rank)
            raise Fail(f"{raised}\n{exc.text}{note}\n{replay}") from None
        if isinstance(exc, Raised) and exc.from_harness and not exc.flagged:
            raise Fail(exc.message) from None
        raise exc from None  # Lost, Raised (the stub's NotImplementedError): the test's runner says it
    except CommError as e:  # a deadlock, misuse of comm
        raise Fail(f"{joined(case.label(), ': ', error_both(e))}\n{replay}") from None
    return values, world


def calls_by_rank(world: SimWorld) -> list[list[dict]]:
    """Every comm call the broker performed, per rank, as the harnesses' ``calls`` report them."""
    return [
        [{k: v for k, v in c.items() if k != "rank"} for c in world.log if c["rank"] == r]
        for r in range(world.world_size)
    ]


def _observe_relayed(answer: Answer, case: Case, *, api: str, device: str, fn_name: str) -> tuple[list, list, list]:
    """The answer on ``case``'s relayed world (:func:`run_relayed`): (each rank's tensor after the
    call, the elements each rank sent, the messages for the picture of a failure), all observed here.
    ``case``'s values are hidden ones (graders/_hidden.py): each rank is given its own input."""
    xs = make_inputs(case)
    values, world = run_relayed(
        answer,
        RANK_SIM,
        case,
        case.world_size,
        {"api": api, "device": device, "fn_name": fn_name},
        fn_name=fn_name,
        p2p=api == "p2p",
        collectives=api == "collectives",
        note=uneven_note(case),
        shown=dataclasses.replace(case, seed=0, key=0),  # the values are each rank's own input alone
        inputs=lambda r: {"tensor": xs[r]},
    )
    outputs = [v.get("output") if type(v) is dict else None for v in values]
    if not all(isinstance(t, torch.Tensor) for t in outputs):
        raise Fail(M("malformed", label=case.label()))
    return outputs, [int(t.sent_elements) for t in world.traffic], world.sends[:2000]


def sim_check(
    answer: Answer,
    case: Case,
    *,
    fn_name: str,
    device: str = "cpu",
    api: str = "p2p",
    bandwidth: bool = False,
    relayed: bool = False,
) -> None:
    """Fail unless the answer gives the right sums (and, if asked, a ring's traffic) on ``case``.

    ``relayed`` (and every traffic check) runs on a relayed world: each rank a process of its own,
    the traffic counted here. The others run on the subject's threads world, about twenty times
    cheaper per case under load, whose sums a cell can forge by moving data between ranks that are
    threads (docs/sandbox.md, "What remains"): only a relayed case can make a test pass."""
    observe = _observe_relayed if bandwidth or relayed else _observe_threads
    if observe is _observe_relayed:
        case = hidden(case)  # values no rank can compute from another's (graders/_hidden.py)
    outputs, sent, messages = observe(answer, case, api=api, device=device, fn_name=fn_name)
    problem = verdict(case, make_inputs(case), outputs, fn_name)
    if problem:
        raise Fail(problem, picture=_ring(messages, case, problem))
    if bandwidth:
        problem = traffic_problem(case, sent, fn_name)
        if problem:
            raise Fail(problem, picture=_ring(messages, case, problem))


def _ring(messages, case: Case, problem: str) -> bytes:
    """The messages each rank sent, drawn (only the judge draws; a malformed log draws nothing)."""
    ok = type(messages) is list and all(
        type(m) is list and len(m) == 5 and all(type(v) is int or v is None for v in m) for m in messages
    )
    if not ok or not messages:  # a run of collectives sends no messages: nothing to draw
        return b""
    from ch13lib.pictures import ring

    try:
        return ring(
            [[m[0], m[1], m[2] if m[2] is not None else -1, m[3], m[4]] for m in messages],
            case.world_size,
            case.numel,
            problem,
        )
    except Exception:  # noqa: BLE001 - a picture is a bonus; the message says it all
        return b""


def smoke(answer: Answer, *, fn_name: str, api: str = "p2p") -> None:
    """A first small case outside hypothesis, so an untouched stub reads "not implemented yet"."""
    sim_check(answer, Case(2, (4,), "float32", 1), api=api, fn_name=fn_name)


REAL_WORLD = 3  # processes; the cases use sub-groups of 1, 2 and 3 of them
REAL_CASES = [
    Case(3, (2, 5), "float32", 31),
    Case(2, (7,), "int64", 32),
    Case(3, (2,), "float64", 33),
    Case(1, (3,), "float32", 34),
    Case(3, (4, 3), "int64", 35),
]


def flagged_by_workers(results: list) -> None:
    """Fail as the subject's own guards do when, in a worker of a real world, the cell was refused
    something (kit.audit) or replaced part of the harness."""

    def events(key):  # every rank runs the same cell: one line per distinct event
        found = [str(x) for r in results if isinstance(r, dict) and isinstance(r.get(key), list) for x in r[key]]
        return list(dict.fromkeys(found))

    refused, tampered = events("refused"), events("tampered")
    if refused or tampered:
        _flagged(types.SimpleNamespace(tampered=tampered, refused=refused))


def checked_reports(results, world: int, where: str) -> None:
    """Fail unless a real world's ``results`` are one dict per rank, then as the subject's own guards
    do when a worker flagged the cell (flagged_by_workers)."""
    if not (isinstance(results, list) and len(results) == world and all(isinstance(r, dict) for r in results)):
        raise Fail(M("world_malformed", where=where))
    flagged_by_workers(results)


def without_replay(problem: str) -> str:
    """A verdict up to its English replay line ("Replay: ...", a line of its own, and the
    hidden-values note under it): a real world's cases replay on the simulator."""
    lines = problem.split("\n")
    cut = next((i for i, line in enumerate(lines) if line.startswith("Replay: ")), len(lines))
    return "\n".join(lines[:cut])


def real_world(
    answer: Answer, target: str, payload: dict, cases: list, size, judge, *, backend: str, world: int
) -> None:
    """The answer on a real ``backend`` world of ``world`` processes, started by the subject
    (``launch_cell`` -> ``target(payload)``); the ranks' reports come back as plain data and are judged
    here: ``size(case)`` ranks take part in each case, ``judge(case, per_rank)`` decides it from their
    reports (None when right, else the problem; one it cannot read is malformed). Notebooks 03 and 07
    share it."""
    payload = {**payload, "cases": [dataclasses.asdict(c) for c in cases]}
    results = answer.run(launch_cell, world, target, payload, backend=backend)
    where = M.both("real_where", backend=backend, world=world)
    checked_reports(results, world, where)
    errors = [str(r["error"]) for r in results if "error" in r]
    if errors:
        if "NotImplementedError" in errors[0]:
            raise Fail(NOT_IMPLEMENTED)
        raise Fail(f"{where}: {errors[0]}")
    for i, case in enumerate(cases):
        per_rank = []
        for r in range(size(case)):
            done = results[r].get("cases")
            per_rank.append(done[i] if isinstance(done, list) and i < len(done) else None)
        crashed = [(r, str(c["error"])) for r, c in enumerate(per_rank) if isinstance(c, dict) and "error" in c]
        if crashed:
            r, why = crashed[0]
            hint = ""
            if any(k in why.lower() for k in ("timed out", "timeout", "connection")):
                hint = "\n" + M("timeout_hint")
            raise Fail(M("rank_failed", where=where, label=case.label(), r=r) + f"\n{why}{hint}")
        if any(not isinstance(c, dict) for c in per_rank):
            raise Fail(M("stopped", where=where, label=case.label()))
        try:
            problem = judge(case, per_rank)
        except (TypeError, ValueError, RuntimeError, KeyError, IndexError):
            problem = M("report_malformed", label=case.label())
        if problem:
            raise Fail(f"{where}: {without_replay(problem)}")


def real_check(
    answer: Answer, fn_name: str, cases: list[Case], *, backend: str, world: int, device: str, api: str
) -> None:
    """The answer's outputs on a real world, compared with the expected all-reduce (verdict)."""

    def judge(case: Case, per_rank: list[dict]) -> str | None:
        problem = verdict(case, make_inputs(case), [c["output"] for c in per_rank], fn_name)
        return problem and without_replay(problem)  # the real world's cases replay on the simulator

    payload = {"function": fn_name, "device": device, "api": api}
    real_world(answer, REAL_TARGET, payload, cases, lambda c: c.world_size, judge, backend=backend, world=world)


def real_process_group(answer: Answer, fn_name: str, api: str) -> None:
    """The same cases on the simulator first, then a gloo world (and NCCL on GPU runners)."""
    # A deadlock on the simulator is a deadlock on gloo too, where a blocked recv never times out:
    # report it from the simulator instead of hanging a world.
    # Relayed, where the ranks are more than one: the real world's ranks are processes that share
    # the subject's files, so its pass must not rest on it alone (a cell could sum through /tmp).
    for case in [Case(2, (4,), "float32", 1)] + REAL_CASES:
        try:
            sim_check(answer, case, api=api, fn_name=fn_name, relayed=case.world_size > 1)
        except Fail as f:
            between = "\n" if language() == "both" else " "  # both: the English line ends the sentence
            raise Fail(M("sim_first") + between + f.message) from None
    real_check(answer, fn_name, REAL_CASES, backend="gloo", world=REAL_WORLD, device="cpu", api=api)
    if answer.gpu and torch.cuda.is_available():
        gpu_check(answer, fn_name, api)


def gpu_check(answer: Answer, fn_name: str, api: str) -> None:
    """NCCL across the GPUs there are (one rank per GPU, at most 4), and the simulator on CUDA tensors."""
    n = min(torch.cuda.device_count(), 4)
    cases = [c for c in REAL_CASES if c.world_size <= n] or [Case(1, (3,), "float32", 34)]
    if n == 1:
        cases = [Case(1, (3,), "float32", 34), Case(1, (2, 5), "int64", 36)]
    real_check(answer, fn_name, cases, backend="nccl", world=n, device="cuda", api=api)
    for case in [
        Case(3, (2, 5), "float32", 41, "random", 1),
        Case(4, (3,), "float64", 42),
        Case(2, (8,), "int64", 43, "round_robin"),
    ]:
        sim_check(answer, case, device="cuda", api=api, fn_name=fn_name)
