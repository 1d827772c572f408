"""Hidden grader of `ddp_average`: ``average_gradients(model)`` with ``dist.all_reduce`` (DDP by hand).

One real gloo world of processes, started as torchrun starts them, trains with the answer and
compares every step with single-process training on the whole batch (ch13lib.collective_ddp).
With ``--gpu`` the same scenarios also run on NCCL, one rank per GPU.
"""
import os

import torch

from ch13lib.collective_launch import launch
from graders.api import Answer, Fail, Grader

grader = Grader("ddp_average", timeout_s=120)
FN = "average_gradients"
WORLD = 3          # an odd world size: a hard-coded "/ 2" cannot pass
SCENARIOS = {
    "plain": {"seed": 7, "d_in": 5, "hidden": 6, "batch": 12, "steps": 3, "lr": 0.1, "frozen": False},
    "frozen": {"seed": 8, "d_in": 4, "hidden": 5, "batch": 6, "steps": 2, "lr": 0.2, "frozen": True},
}


def _run(answer: Answer, backend: str, world: int, device: str) -> list:
    cache = answer.__dict__.setdefault("_worlds", {})     # one world per answer and backend, for both tests
    if backend not in cache:
        names = list(SCENARIOS)
        results = launch(world, "ch13lib.collective_ddp:run_ddp_rank",
                         {"source": answer.source, "name": answer.grade_id, "function": FN, "device": device,
                          "scenarios": [SCENARIOS[n] for n in names]}, backend=backend,
                         )
        cache[backend] = (names, results)
    return cache[backend]


def _smoke(answer: Answer, scenario: str) -> None:
    """World size 1 in this process (gloo over an in-memory store, no port): a stub or a crash is
    reported at once, before a real world is started."""
    import torch.distributed as dist
    from ch13lib.collective_ddp import run_ddp_rank
    cache = answer.__dict__.setdefault("_worlds", {})
    key = "smoke " + scenario
    if key not in cache:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            res = run_ddp_rank({"source": answer.source, "name": answer.grade_id, "function": FN,
                                "device": "cpu", "scenarios": [SCENARIOS[scenario]]})
        finally:
            dist.destroy_process_group()
        cache[key] = res["scenarios"][0]
    problem = cache[key]
    if problem and problem.get("crash"):
        if "NotImplementedError" in problem["text"]:
            raise NotImplementedError
        raise Fail(f"at world size 1 (one process, before any real world is started): {problem['text']}")


def _check(answer: Answer, scenario: str) -> None:
    module = answer.module
    if not callable(getattr(module, FN, None)):
        raise Fail(f"the cell does not define a function `{FN}(model)`")
    _smoke(answer, scenario)
    worlds = [("gloo", WORLD, "cpu")]
    if os.environ.get("CH13_DEVICE") == "gpu" and torch.cuda.is_available():
        worlds.append(("nccl", min(torch.cuda.device_count(), 4), "cuda"))
    for backend, world, device in worlds:
        names, results = _run(answer, backend, world, device)
        where = (f"{world}-rank DDP on a real {backend} process group (processes started as torchrun starts "
                 f"them), compared with single-process training on the whole batch")
        i = names.index(scenario)
        found = []       # (kind, step, rank, text): the root cause first, a peer's broken connection last
        for r, res in enumerate(results):
            if "error" in res:
                found.append((3, 0, r, res["error"]))
                continue
            reps = res["scenarios"]
            p = reps[i] if i < len(reps) else (reps[-1] if reps and reps[-1] and reps[-1]["crash"] else None)
            if p:
                text = p["text"]
                peer = any(k in text.lower() for k in ("connection", "timed out", "timeout", "pair.cc"))
                found.append((2 if peer else int(p["crash"]), p["step"], r, text))
        if found:
            kind, step, r, text = min(found)
            if "NotImplementedError" in text:
                raise NotImplementedError
            raise Fail(f"{where}: rank {r}, {text}")


@grader.test(3)
def matches_single_process_training(answer: Answer) -> None:
    """Every rank's gradients and parameters follow single-process training, step by step."""
    _check(answer, "plain")


@grader.test(2)
def frozen_parameters(answer: Answer) -> None:
    """A model with a frozen layer (its parameters have no .grad): still averaged right."""
    _check(answer, "frozen")
