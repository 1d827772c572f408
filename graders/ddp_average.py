"""Hidden grader of `ddp_average`: ``average_gradients(model)`` with ``dist.all_reduce`` (DDP by hand).

The subject (kit/subject.py) first runs the answer at world size 1 in its own process, then starts
one real gloo world of processes, as torchrun starts them, in which every rank trains with the
answer and records, step by step, its gradients before and after ``average_gradients`` and its
parameters after ``step()`` (ch13lib.collective_ddp). This judge trains the single-process model
on the whole batch itself and compares. With ``--gpu`` the same scenarios also run on NCCL, one
rank per GPU.

Each test measures one thing:
- ``matches_single_process_training``: the VALUES, on a plain model: every gradient is the
  average (the all_reduce sum divided by the world size), on every rank, at every step, in the
  3-rank world and at world size 1. A divisor other than the world size (a hard-coded 2 or 3, no
  division) fails here, and only here.
- ``frozen_parameters``: the STRUCTURE, on a model with a frozen layer: parameters without a
  .grad are skipped (no crash, no .grad made for them, left unchanged) and every other parameter
  is still all-reduced in place. Gradients off the average by one common factor (a wrong
  divisor: the first test's to judge) are compared with single-process training at that scale.
"""

import dataclasses

import torch

from ch13lib.collective_ddp import compare, fit_scale
from ch13lib.lang import Messages
from graders._collectives import checked_reports, run_relayed
from graders._hidden import hidden_seed
from graders.api import NOT_IMPLEMENTED, Answer, Fail, Grader
from kit.harnesses.collective_ddp import observe_alone, rank_inputs
from kit.harnesses.collective_launch import launch_cell

grader = Grader(
    "ddp_average",
    timeout_s=120,
    harness=(
        "kit.harnesses.collective_ddp",
        "kit.harnesses.collective_launch",
        "ch13lib.collective_cases",
        "ch13lib.procgroup",
    ),
)
# What this grader says itself, in the course's language (ch13lib/lang.py). Where a rank's own text
# (already in that language) follows, the phrase before it is a Both: "{where}: {text}".
M = Messages(
    relayed_label=(
        "在 rank 之间不共享任何东西的模拟 world 上的 {w} 个 rank 的 DDP",
        "{w}-rank DDP on a simulated world whose ranks share nothing",
    ),
    alone=(
        "在 world size 1 下 (单个进程, 在启动任何真实 world 之前)",
        "at world size 1 (one process, before any real world is started)",
    ),
    malformed=("这个 rank 的报告传回时格式有误", "the rank's report came back malformed"),
    stopped=("这个 rank 在这个场景之前就停止了", "the rank stopped before this scenario"),
    where_relayed=(
        "在 rank 之间不共享任何东西的模拟 world 上的 {w} 个 rank 的 DDP (每个 rank 是独立的进程, 每次 all_reduce "
        "都由评分程序转发), 与在整个批次上的单进程训练比较",
        "{w}-rank DDP on a simulated world whose ranks share nothing (each its own process, every all_reduce "
        "relayed by the grader), compared with single-process training on the whole batch",
    ),
    where_real=(
        "在真实的 {backend} 进程组上的 {w} 个 rank 的 DDP (进程像 torchrun 那样启动), 与在整个批次上的单进程训练比较",
        "{w}-rank DDP on a real {backend} process group (processes started as torchrun starts them), compared "
        "with single-process training on the whole batch",
    ),
    alone_values=(
        "在 world size 1 下 (单个进程, 平均值就是这个 rank 自己的梯度), 与单进程训练比较",
        "at world size 1 (one process, where the average is the rank's own gradient), compared with "
        "single-process training",
    ),
)
FN = "average_gradients"
WORLD = 3  # an odd world size: a hard-coded "/ 2" cannot pass (and world size 1 catches a "/ 3")
TARGET = "kit.harnesses.collective_ddp:observe_ddp_rank"
RANK_TARGET = "kit.harnesses.collective_ddp:rank_ddp"  # a rank of the relayed world
SCENARIOS = {  # graded under hidden seeds (_scenario)
    "plain": {"d_in": 5, "hidden": 6, "batch": 12, "steps": 3, "lr": 0.1, "frozen": False},
    "frozen": {"d_in": 4, "hidden": 5, "batch": 6, "steps": 2, "lr": 0.2, "frozen": True},
}


def _scenario(name: str) -> dict:
    """The scenario with its model and batches drawn under a seed no subject can search for: with a
    public seed, a cell could rebuild the whole batch from its model's initial weights and write the
    full-batch gradient without communicating."""
    return dict(SCENARIOS[name], seed=hidden_seed(f"ddp_average {name} {SCENARIOS[name]!r}"))


def _nccl_world(gpus: int) -> int:
    """One rank per GPU, at most 4, and a world size that splits every scenario's batch evenly
    (equal shards: only then is the average of the ranks' gradients the full-batch gradient)."""
    return max(w for w in range(1, min(gpus, 4) + 1) if all(sc["batch"] % w == 0 for sc in SCENARIOS.values()))


def _cache(answer: Answer) -> dict:
    return answer.__dict__.setdefault("_ddp", {})  # one world per answer and backend, for both tests


def _run(answer: Answer, backend: str, world: int, device: str) -> tuple[list, list]:
    cache = _cache(answer)
    if backend not in cache:
        names = list(SCENARIOS)
        results = answer.run(
            launch_cell,
            world,
            TARGET,
            {"function": FN, "device": device, "scenarios": [_scenario(n) for n in names]},
            backend=backend,
        )
        cache[backend] = (names, results)
    return cache[backend]


@dataclasses.dataclass(frozen=True)
class _RelayedWorld:
    """The relayed world as run_relayed names it in a failure (its schedule is fixed)."""

    policy: str = "round_robin"
    schedule_seed: int = 0

    def label(self):
        return M.both("relayed_label", w=WORLD)

    def replay(self, fn_name: str) -> str:
        return f"from ch13lib.collective_checks import check_average_gradients; check_average_gradients({fn_name})"


def _run_relayed(answer: Answer, scenario: str) -> tuple[list, list]:
    """The scenario on a world whose ranks are subject processes of their own and whose broker is
    this judge: each rank is given the initial weights and its own shards only (no seed), and its
    all_reduce calls are messages relayed here. Data can move between ranks through all_reduce
    alone: in a real world, ranks that share a temp folder could average each other's gradients from
    files with no communication at all. A world per scenario:
    a rank that crashes in one leaves the other's verdict alone."""
    cache = _cache(answer)
    key = "relayed " + scenario
    if key not in cache:
        sc = _scenario(scenario)
        values, _ = run_relayed(
            answer,
            RANK_TARGET,
            _RelayedWorld(),
            WORLD,
            {"function": FN},
            fn_name=FN,
            p2p=False,
            all_reduce=True,
            shown=scenario,
            inputs=lambda r: {"world": WORLD, "scenarios": [rank_inputs(sc, r, WORLD)]},
        )
        cache[key] = ([scenario], values)
    return cache[key]


def _smoke(answer: Answer, scenario: str) -> None:
    """World size 1 in the subject's own process (gloo over an in-memory store, no port): a stub or
    a crash is reported at once, before a real world is started."""
    cache = _cache(answer)
    key = "smoke " + scenario
    if key not in cache:
        seen = answer.run(observe_alone, [_scenario(scenario)], FN)
        cache[key] = seen[0] if isinstance(seen, list) and seen and isinstance(seen[0], dict) else {}
    crash = cache[key].get("crash")
    if crash:
        raise Fail(f"{M.both('alone')}: {_text(crash)}")


def _text(problem) -> str:
    return str(problem.get("text", "")) if isinstance(problem, dict) else str(problem)


def _rank_problem(scenario: str, world: int, res: dict, i: int, scaled: bool):
    """(kind, step, text) of this rank's first problem in scenario ``i``, or None. kind: 0 a wrong
    record, 1 its own crash, 2 a broken connection to a peer (a symptom), 3 no report at all."""
    if "error" in res:
        return 3, 0, str(res["error"])
    reps = res.get("scenarios")
    if not isinstance(reps, list) or not all(isinstance(p, dict) for p in reps):
        return 3, 0, M("malformed")
    if i < len(reps):
        seen = reps[i]
    elif reps and reps[-1].get("crash"):
        seen = reps[-1]  # it crashed in an earlier scenario and never reached this one
    else:
        return 3, 0, M("stopped")
    crash = seen.get("crash")
    if crash:
        text = _text(crash)
        peer = any(k in text.lower() for k in ("connection", "timed out", "timeout", "pair.cc"))
        step = crash.get("step", 0) if isinstance(crash, dict) else 0
        return (2 if peer else 1), step if type(step) is int else 0, text
    sc = _scenario(scenario)
    steps = seen.get("steps") if isinstance(seen.get("steps"), list) else []
    problem = compare(sc, world, steps, scale=fit_scale(sc, steps) if scaled else 1.0)
    if problem:
        return 0, problem["step"], problem["text"]
    return None


def _check(answer: Answer, scenario: str, *, scaled: bool) -> None:
    answer.require(FN, needs=f"`{FN}(model)`")
    _smoke(answer, scenario)
    worlds = [("gloo", WORLD, "cpu")]
    if answer.gpu and torch.cuda.is_available():
        worlds.append(("nccl", _nccl_world(torch.cuda.device_count()), "cuda"))
    # Last, what a pass rests on: ranks that share no files, no store, no memory (_run_relayed).
    worlds.append(("relayed", WORLD, "cpu"))
    for backend, world, device in worlds:
        if backend == "relayed":
            names, results = _run_relayed(answer, scenario)
            where = M.both("where_relayed", w=world)
        else:
            names, results = _run(answer, backend, world, device)
            where = M.both("where_real", w=world, backend=backend)
        checked_reports(results, world, where)
        i = names.index(scenario)
        found = []  # (kind, step, rank, text): the root cause first, a peer's broken connection last
        for r, res in enumerate(results):
            p = _rank_problem(scenario, world, res, i, scaled)
            if p:
                found.append((p[0], p[1], r, p[2]))
        if found:
            kind, step, r, text = min(found)
            if "NotImplementedError" in text:
                raise Fail(NOT_IMPLEMENTED)
            raise Fail(f"{where}: rank {r}, {text}")
    if not scaled:
        # The values at world size 1 too (recorded by the smoke run): a divisor fixed at the
        # world size of the real world (a hard-coded 3) is wrong in every other one.
        steps = _cache(answer)["smoke " + scenario].get("steps")
        problem = compare(_scenario(scenario), 1, steps if isinstance(steps, list) else [])
        if problem:
            raise Fail(f"{M.both('alone_values')}: {problem['text']}")


@grader.test(3)
def matches_single_process_training(answer: Answer) -> None:
    """The average itself: every rank's gradients are the full-batch average (the all_reduce sum
    divided by the world size), step by step, and the parameters follow single-process training."""
    _check(answer, "plain", scaled=False)


@grader.test(2)
def frozen_parameters(answer: Answer) -> None:
    """A model with a frozen layer (its parameters have no .grad): skipped without a crash, and every
    other parameter still all-reduced in place (the divisor is matches_single_process_training's)."""
    _check(answer, "frozen", scaled=True)
