"""Notebook 03's grading side for the all-reduce exercises (all_reduce, rs_ag_all_reduce): what the
hidden graders run on the answer cell in the grading subject (kit/subject.py), and what a rank of
a real world the subject launches may run. Raw observations in plain data; graders/_collectives.py
judges them with ch13lib.collective_cases (the cases, ``verdict``, ``traffic_problem``), which the
notebook's self-check shares.

``observe_sim`` runs the cell on the threads world (``ch13lib.collective_cases.run_on_sim``, the
self-check's run); ``rank_sim`` is one rank of a relayed world whose broker is the judge
(kit/harnesses/procgroup_relay.py); ``run_real_cases`` one rank of a real torch.distributed world
(kit/harnesses/collective_launch.py ``launch_cell``).
"""

from __future__ import annotations

import torch

from ch13lib.cell import not_defined, rank_copies
from ch13lib.collective_cases import Case, SimFailure, make_inputs, messages, run_on_sim
from ch13lib.collective_launch import DistComm, load_source, own_traceback
from kit.harnesses.procgroup_relay import serve_report

# What the hidden graders may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("observe_sim", "rank_sim")
# What a rank of a world the subject launches may run (kit/harnesses/collective_launch.py).
RANK_API = ("run_real_cases",)


def _contract_function(cell, fn_name: str):
    fn = getattr(cell.module, fn_name, None)
    if not callable(fn):
        raise SimFailure(not_defined(fn_name, getattr(cell, "grade_id", "answer"), f"`{fn_name}(tensor, comm)`"))
    return fn


def observe_sim(
    cell, case: Case, *, api: str = "p2p", device: str = "cpu", fn_name: str = "ring_all_reduce", guard_s: float = 20.0
) -> dict:
    """Subject side: run the cell's ``fn_name(tensor, comm)`` on the simulated world of ``case``.

    Returns raw observations, no verdict: ``{"outputs": [rank r's tensor after the call, on the
    CPU], "sent": [elements rank r sent]}``. Raises :class:`SimFailure` (a deadlock, a crash, misuse
    of comm: what only the run itself can see) and ``NotImplementedError`` for the stub.
    """
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    _contract_function(cell, fn_name)
    fns = rank_copies(cell, fn_name, case.world_size)  # each rank its own module, as a process
    _, outputs, world = run_on_sim(fns, case, api=api, device=device, fn_name=fn_name, guard_s=guard_s)
    return {
        "outputs": [t.detach().to("cpu").clone() for t in outputs],
        "sent": [int(t.sent_elements) for t in world.traffic],
        "messages": messages(world, outputs),
    }


def rank_sim(
    cell,
    case: Case,
    rank: int,
    *,
    api: str = "p2p",
    device: str = "cpu",
    fn_name: str = "ring_all_reduce",
    inputs: dict | None = None,
):
    """Subject side of one rank of ``case`` in a world whose broker is the judge (one subject
    process per rank: the ranks share no memory, and every byte between them is a message the
    judge relays and counts; ch13lib.procgroup.SimWorld.run_remote). A talking harness: a
    generator that yields each comm call and is sent the broker's answer (kit/subject.py).

    Returns raw observations, no verdict: ``{"output": the rank's tensor after the call}``,
    ``{"raised": its traceback}`` or ``{"stopped": True}`` (the world failed elsewhere).
    Raises :class:`SimFailure` when the function is missing and ``NotImplementedError`` for the stub.
    ``inputs``: ``{"tensor": this rank's input}`` from the judge (its hidden values); without it,
    the case's own.
    """
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    fn = _contract_function(cell, fn_name)
    if type(inputs) is dict:
        tensor = inputs["tensor"].to(device).clone()
    else:
        tensor = make_inputs(case, device)[rank].clone()

    def body(comm):
        fn(tensor, comm)
        return {"output": tensor.detach().to("cpu").clone()}

    return (yield from serve_report(body, rank, case.world_size, own=tensor))


def run_real_cases(payload: dict) -> dict:
    """One rank of a real world (a ``RANK_API`` entry: ch13lib.collective_launch): run the answer on each case.

    payload: ``source``, ``name`` (grade_id), ``function``, ``cases`` (Case dicts), ``device``,
    ``api`` ("p2p" or "collectives"). Returns the rank's outputs per case; it stops at its first
    error (the other ranks then fail on the process group's timeout, not later).
    """
    import torch.distributed as dist

    rank = dist.get_rank()
    device = payload.get("device", "cpu")
    module = load_source(payload["source"], payload["name"])
    fn = getattr(module, payload["function"])
    cases = [Case(**{**c, "shape": tuple(c["shape"])}) for c in payload["cases"]]
    groups = {}
    for w in sorted({c.world_size for c in cases}):
        groups[w] = dist.new_group(list(range(w)))
    results = []
    for i, case in enumerate(cases):
        if rank >= case.world_size:
            results.append(None)
            continue
        t = make_inputs(case, device)[rank].clone()
        comm = DistComm(groups[case.world_size], list(range(case.world_size)), device)
        try:
            fn(t, comm)
            if device != "cpu":
                torch.cuda.synchronize()
        except BaseException as e:  # noqa: BLE001 - the student's error, reported per case
            results.append({"error": own_traceback(e)})
            break
        results.append({"output": t.cpu().reshape(-1).tolist(), "sent": comm.sent_elements})
    return {"cases": results}
