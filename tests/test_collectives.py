"""Notebook 03 (collectives): the simulated process group, the torchrun-style launcher, the three
graders (all_reduce, ddp_average, rs_ag_all_reduce) on their own cases, and the notebook itself
(the catalogues are graded by tests/test_catalogues.py).

Graders run in this process; the answer runs in their subject process (kit/subject.py), which
also starts the real gloo worlds, each on a free port. GPU tests are marked ``gpu`` and skip
without CUDA.
"""

from __future__ import annotations

import dataclasses
import os
import threading

import pytest
import torch

import graders  # noqa: F401 - first: it puts source/ch13_04 on sys.path (ch13lib is not part of the installed kit)
from ch13lib import collective_checks
from ch13lib.collective_cases import Case, make_inputs, ring_bound, verdict
from ch13lib.collective_launch import launch
from ch13lib.procgroup import CommError, Deadlock, RankError, SimWorld, run_ranks
from graders import _catalogue as catalogue
from tests.inprocess import references_pass_on_the_gpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRADE_IDS = ["all_reduce", "ddp_average", "rs_ag_all_reduce"]


# The catalogues themselves are graded once, for every grade_id, by tests/test_catalogues.py.


# The notebook's reference solutions (full marks) and its untouched stubs ("not implemented yet" from
# every test) are graded through plain `nbgrader autograde` by tests/test_pipeline.py, and every
# catalogue answer once by tests/test_catalogues.py: not again here. What one wrong answer costs
# (a DDP divisor costs the averaging test only, say) is its catalogue file's `# fails:` line. What a
# rank of a real world reports when the cell is refused something there or replaces the harness there:
# the red-team corpus (tests/redteam/c_all_reduce_rank_*); when it is left with no guard, or names a
# target it was not handed: the tests below.


RIGHT_RING = catalogue.source("all_reduce", "right_reference")


UNGUARDED = "was handed no guard by the grading process"


def test_a_rank_that_must_be_guarded_runs_nothing_without_a_guard():
    """A world whose payload asks for the guards (launch_cell outside a subject), or any world in
    the grading sandbox (no_new_privs, here set by hand), runs no target where no guard was handed
    over: ch13lib imports nothing of kit to find one. The launcher starts no such rank, and a rank
    started anyway (the launcher's own check talked out of it) refuses by itself."""
    import json
    import subprocess
    import sys
    from types import SimpleNamespace

    from kit.harnesses.collective_launch import launch_cell

    payload = {
        "function": "ring_all_reduce",
        "device": "cpu",
        "api": "p2p",
        "cases": [{"world_size": 1, "shape": [3], "dtype": "int64", "seed": 1, "policy": "stay", "schedule_seed": 0}],
    }
    cell = SimpleNamespace(source=RIGHT_RING, grade_id="all_reduce")
    results = launch_cell(cell, 1, "kit.harnesses.collective_cases:run_real_cases", payload)
    assert [UNGUARDED in r.get("error", "") and "cases" not in r for r in results] == [True], results
    code = (
        "import ctypes, json, sys\n"
        "assert ctypes.CDLL(None).prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS, as kit.sandbox sets it\n"
        "from ch13lib import collective_launch\n"
        "payload = json.loads(sys.argv[1])\n"
        "refused = collective_launch.launch(1, 'kit.harnesses.collective_cases:run_real_cases', payload)\n"
        "collective_launch.sandboxed = lambda: False  # the launcher talked out of its check: the rank starts\n"
        "started = collective_launch.launch(1, 'kit.harnesses.collective_cases:run_real_cases', payload)\n"
        "print(json.dumps([refused, started]))\n"
    )
    sandboxed = dict(payload, source=RIGHT_RING, name="all_reduce")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "source", "ch13_04"))
    run = subprocess.run(
        [sys.executable, "-c", code, json.dumps(sandboxed)], capture_output=True, text=True, env=env, timeout=300
    )
    refused, started = json.loads(run.stdout.strip().splitlines()[-1])
    for results in (refused, started):
        assert [UNGUARDED in r.get("error", "") and "cases" not in r for r in results] == [True], (results, run.stderr)
    assert "exited" not in started[0]["error"] and "PermissionError" not in started[0]["error"]  # the rank's report


def _guarded_world(target: str, entries: list[str]) -> list[dict]:
    """A 1-rank world whose rank is guarded as a rank forked from the subject's zygote is (a guard
    and the registry handed over, ``_worker``'s arguments; the guard here installs nothing)."""
    import subprocess
    import sys

    code = (
        "import importlib, os, sys\n"
        "from ch13lib.collective_launch import _worker\n"
        "named = [n.split(':') for n in sys.argv[2:]]\n"
        "entries = tuple((f'{m}:{f}', getattr(importlib.import_module(m), f)) for m, f in named)\n"
        "os._exit(_worker(sys.argv[1], lambda harness: (lambda: {}), entries))\n"
    )

    def start(tmp, envs):
        return [
            subprocess.Popen([sys.executable, "-c", code, tmp, *entries], env=env, cwd=tmp, stdin=subprocess.DEVNULL)
            for env in envs
        ]

    payload = {
        "name": "all_reduce",
        "source": RIGHT_RING,
        "function": "ring_all_reduce",
        "device": "cpu",
        "api": "p2p",
        "cases": [{"world_size": 1, "shape": [3], "dtype": "int64", "seed": 1, "policy": "stay", "schedule_seed": 0}],
    }
    return launch(1, target, payload, audit=True, start=start)


def test_a_guarded_rank_runs_only_an_entry_the_subject_handed_over():
    """The rank's boundary (kit.subject.Trusted.ranks): a guarded rank runs the payload's target only
    when the registry it was handed holds that exact ``module:function``; a RANK_API function of a
    harness package that was not handed over, or any other name, is refused and nothing is imported."""
    handed = ["kit.harnesses.collective_cases:run_real_cases"]
    ran = _guarded_world("kit.harnesses.collective_cases:run_real_cases", handed)
    assert ran[0]["cases"][0]["output"] == make_inputs(Case(1, (3,), "int64", 1))[0].tolist(), ran
    for target in ("kit.harnesses.parallel_sim:run_real", "ch13lib.collective_ddp:observe_ddp_rank", "os:system"):
        refused = _guarded_world(target, handed)
        assert "not a rank entry point" in refused[0].get("error", "") and "cases" not in refused[0], (target, refused)


# ---- the simulated process group ------------------------------------------------------------
def _send_then_recv(t, comm):
    comm.send(t, (comm.rank + 1) % comm.world_size)
    comm.recv(torch.empty_like(t), (comm.rank - 1) % comm.world_size)


def test_rendezvous_send_deadlock_names_the_cycle():
    """Does a blocking send wait for its recv, so send-then-recv on every rank is reported as a cycle at once?"""
    with pytest.raises(Deadlock) as e:
        run_ranks(_send_then_recv, [torch.ones(2) for _ in range(3)])
    text = str(e.value)
    assert "rank 0 is blocked in send(to rank 1)" in text
    assert "wait-for cycle: rank 0 -> rank 1 -> rank 2 -> rank 0" in text
    assert "comm.send(t, (comm.rank + 1) % comm.world_size)" in text  # the caller's own line


def test_a_returned_rank_is_named_in_the_deadlock():
    def fn(rank, comm):
        if rank == 1:
            comm.recv(torch.empty(1), 0)

    with pytest.raises(Deadlock, match="rank 0 has already returned"):
        SimWorld(2).run(fn)


def test_isend_buffer_changed_before_wait_is_reported():
    def fn(rank, comm):
        buf = torch.full((3,), float(rank))
        if rank == 0:
            w = comm.isend(buf, 1)
            buf += 1  # touched while in flight
            w.wait()
        else:
            comm.recv(torch.empty(3), 0)

    for policy in SimWorld.POLICIES:
        with pytest.raises(CommError, match="changed the buffer of its isend"):
            SimWorld(2, policy=policy).run(fn)


def test_irecv_data_arrives_only_at_wait():
    seen = {}

    def fn(rank, comm):
        if rank == 0:
            comm.send(torch.tensor([7.0]), 1)
        else:
            box = torch.zeros(1)
            w = comm.irecv(box, 0)
            seen["before"] = box.item()
            w.wait()
            seen["after"] = box.item()

    SimWorld(2, policy="round_robin").run(fn)
    assert seen == {"before": 0.0, "after": 7.0}


def test_size_mismatch_self_send_and_unreceived_send():
    def mismatch(rank, comm):
        if rank == 0:
            comm.send(torch.ones(3), 1)
        else:
            comm.recv(torch.empty(2), 0)

    with pytest.raises(CommError, match="size mismatch"):
        SimWorld(2).run(mismatch)
    with pytest.raises(CommError, match="itself"):
        SimWorld(2).run(lambda r, c: c.send(torch.ones(1), r))

    def orphan(rank, comm):
        if rank == 0:
            comm.isend(torch.ones(1), 1)

    with pytest.raises(CommError, match="never posted a matching recv"):
        SimWorld(2).run(orphan)


def test_rank_exception_is_reported_with_its_rank():
    def fn(rank, comm):
        if rank == 2:
            raise ValueError("boom")
        comm.recv(torch.empty(1), 2)

    with pytest.raises(RankError) as e:
        SimWorld(3).run(fn)
    assert e.value.rank == 2 and isinstance(e.value.exc, ValueError)


def test_a_ranks_traceback_keeps_both_languages_of_a_long_sentence_and_a_librarys_first_line():
    from ch13lib.collective_launch import own_traceback

    both = ValueError("秩 1 的张量形状不对, 应该是 (4,) 而实际是 (3,)\nrank 1's tensor has the wrong shape")
    assert own_traceback(both).endswith(
        "ValueError: 秩 1 的张量形状不对, 应该是 (4,) 而实际是 (3,)\nrank 1's tensor has the wrong shape"
    )
    library = RuntimeError("Connection closed by peer [127.0.0.1]:4242\nException raised from recv at pair.cc:534")
    assert own_traceback(library).endswith("RuntimeError: Connection closed by peer <address>")


def test_same_interleaving_and_traffic_every_run():
    """Is the simulator deterministic: the same order of events and traffic for the same seed?"""

    def trace_run():
        order = []

        def fn(t, comm):
            for step in range(comm.world_size - 1):
                order.append((comm.rank, step))
                w = comm.isend(t.clone(), (comm.rank + 1) % comm.world_size)
                comm.recv(torch.empty_like(t), (comm.rank - 1) % comm.world_size)
                w.wait()

        world = run_ranks(fn, [torch.ones(4) for _ in range(5)], policy="random", seed=3)
        return order, [t.sent_elements for t in world.traffic]

    assert trace_run() == trace_run()


def test_collectives_reduce_scatter_and_all_gather():
    ins = [torch.arange(6, dtype=torch.float64) * (r + 1) for r in range(3)]
    outs = [torch.empty(2, dtype=torch.float64) for _ in range(3)]
    gathered = [torch.empty(6, dtype=torch.float64) for _ in range(3)]

    def fn(rank, comm):
        comm.reduce_scatter_tensor(outs[rank], ins[rank])
        comm.all_gather_into_tensor(gathered[rank], outs[rank])

    world = SimWorld(3)
    world.run(fn, p2p=False, collectives=True)
    for g in gathered:
        assert torch.equal(g, torch.arange(6, dtype=torch.float64) * 6)
    assert [t.sent_elements for t in world.traffic] == [8, 8, 8] == [ring_bound(3, 6)] * 3


def test_verdict_tolerance_accepts_any_order_and_rejects_average():
    case = Case(5, (7,), "float32", 3)
    ins = make_inputs(case)
    rev = torch.zeros(7, dtype=torch.float32)
    for x in reversed(ins):
        rev += x
    assert verdict(case, ins, [rev.clone() for _ in ins]) is None
    assert "average" in verdict(case, ins, [rev / 5 for _ in ins])


@pytest.mark.slow
def test_launch_two_worlds_at_once_on_free_ports():
    """Can two gloo worlds start at the same time (no fixed port), each reporting every rank?"""
    src = catalogue.source("all_reduce", "right_reference")
    payload = {
        "source": src,
        "name": "all_reduce",
        "function": "ring_all_reduce",
        "device": "cpu",
        "api": "p2p",
        "cases": [{"world_size": 2, "shape": [5], "dtype": "int64", "seed": 1, "policy": "stay", "schedule_seed": 0}],
    }
    out = [None, None]

    def go(i):
        out[i] = launch(2, "kit.harnesses.collective_cases:run_real_cases", payload)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    case = Case(2, (5,), "int64", 1)
    for res in out:
        assert res is not None and all("error" not in r for r in res), res
        assert verdict(case, make_inputs(case), [r["cases"][0]["output"] for r in res]) is None


def test_self_check_says_not_implemented(capsys):
    def ring_all_reduce(tensor, comm):
        raise NotImplementedError()

    assert collective_checks.check_ring_all_reduce(ring_all_reduce) is False
    assert "not implemented yet" in capsys.readouterr().out


def test_self_check_steps_aside_while_grading(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert collective_checks.check_ring_all_reduce(lambda t, c: None) is True
    assert capsys.readouterr().out.count("\n") == 1


@pytest.mark.gpu
def test_gpu_grading_of_the_reference():
    """On a GPU runner: does the reference pass with NCCL and CUDA tensors in the grade?"""
    references_pass_on_the_gpu(GRADE_IDS)


# ---- ranks in processes of their own: the judge as the world's broker --------------------------
def _cell(source: str):
    import types

    module = types.ModuleType("answer_cell")
    exec(compile(source, "<answer cell>", "exec"), module.__dict__)
    return module


def _both_worlds(fn, case: Case, api: str):
    """The same answer on the threads world (run) and on the relayed world (run_remote, here with
    its ranks' halves in threads of this process): (outputs, traffic, sends, failure text) of each.
    ``fn``: one function, or one per rank."""
    fns = fn if isinstance(fn, list) else [fn] * case.world_size
    from ch13lib.procgroup import RemoteRankRaised
    from kit.harnesses.procgroup_relay import serve_rank

    seen = []
    for remote in (False, True):
        tensors = [x.clone() for x in make_inputs(case)]
        world = SimWorld(case.world_size, policy=case.policy, seed=case.schedule_seed)
        flags = {"p2p": api == "p2p", "collectives": api == "collectives"}
        failure = ""
        try:
            if remote:
                talks = [
                    serve_rank(lambda c, t=t, f=fns[r]: f(t, c), r, case.world_size, own=t)
                    for r, t in enumerate(tensors)
                ]

                def finish(r, value):
                    if value[0] == "raised":
                        raise RemoteRankRaised(f"{type(value[1]).__name__}: {value[1]}")
                    return value

                world.run_remote(talks, finish, **flags)
            else:
                world.run(lambda r, c: fns[r](tensors[r], c), **flags)
        except RankError as e:
            exc = e.exc.text if remote else f"{type(e.exc).__name__}: {e.exc}"
            failure = f"rank {e.rank} raised {exc}"
        except CommError as e:
            failure = str(e)
        sends = world.sends if remote else None
        seen.append(([t.tolist() for t in tensors], [t.sent_elements for t in world.traffic], sends, failure))
    return seen


REMOTE_CASES = [
    Case(4, (10,), "float32", 3, "random", 2),
    Case(3, (2, 3), "int64", 5, "round_robin"),
    Case(5, (3,), "float64", 7, "stay"),
    Case(1, (3,), "float64", 1),
]


@pytest.mark.parametrize(
    "gid,name",
    [(g, e.name) for g in ("all_reduce", "rs_ag_all_reduce") for e in catalogue.entries(g)],
)
def test_the_relayed_world_sees_what_the_threads_world_sees(gid, name):
    """Every catalogue answer, relayed rank by rank through run_remote, ends with the same tensors,
    the same traffic and the same failure (deadlock, misuse, a rank's exception) as on threads."""
    fn_name = "rs_ag_all_reduce" if gid == "rs_ag_all_reduce" else "ring_all_reduce"
    for case in REMOTE_CASES:  # each rank its own module, in both worlds: ranks share no module state
        fns = [getattr(_cell(catalogue.source(gid, name)), fn_name) for _ in range(case.world_size)]
        threads, relayed = _both_worlds(fns, case, "collectives" if gid == "rs_ag_all_reduce" else "p2p")
        assert relayed[:2] == threads[:2], (name, case)
        assert relayed[3] == threads[3], (name, case)


def test_the_broker_records_each_send_and_refuses_malformed_calls():
    def ring(t, comm):
        w = comm.isend(t[:1], (comm.rank + 1) % comm.world_size)
        comm.recv(torch.empty(1), (comm.rank - 1) % comm.world_size)
        w.wait()

    from kit.harnesses.procgroup_relay import serve_rank

    tensors = [torch.arange(3.0) + r for r in range(3)]
    world = SimWorld(3)
    world.run_remote([serve_rank(lambda c, t=t: ring(t, c), r, 3, own=t) for r, t in enumerate(tensors)])
    assert sorted(world.sends) == [[0, 0, 1, 1, 0], [1, 0, 2, 1, 0], [2, 0, 0, 1, 0]]
    assert [t.sent_elements for t in world.traffic] == [1, 1, 1]

    def liar(calls):  # a rank's process that sends whatever it likes
        def talk():
            for call in calls:
                yield [call] if type(call) is dict else call  # a batch of calls, or garbage
            return "done"

        return talk()

    bad = [
        "not a dict",
        {"call": "send", "t": {"shape": [2**30], "stride": [1], "dtype": "float32"}, "peer": 1},
        {"call": "send", "t": {"shape": [2], "stride": [1], "dtype": "float32", "data": torch.ones(3)}, "peer": 1},
        {"call": "send", "t": {"shape": [1], "stride": [1], "dtype": "object"}, "peer": 1},
        {"call": "wait", "id": "7"},
        {"call": "steal_the_count"},
    ]
    for call in bad:
        with pytest.raises(CommError, match="malformed|not a call|never made|does not offer"):
            SimWorld(2).run_remote([liar([call]), liar([])])


def test_a_relayed_rank_computes_on_the_hidden_input_it_is_given():
    """A keyed case draws other values than its public seed (make_inputs), its replay line names the
    public case only, and rank_sim computes on the input the judge hands it, not on the case's own."""
    import types

    from ch13lib.cell import load
    from ch13lib.procgroup import RemoteRankRaised
    from kit.harnesses.collective_cases import rank_sim

    case = Case(3, (4,), "float32", 5, "random", 1)
    keyed = dataclasses.replace(case, key=2**40 + 3)
    public, hidden = make_inputs(case), make_inputs(keyed)
    assert all(a.shape == b.shape and not torch.equal(a, b) for a, b in zip(public, hidden))
    assert "key" not in keyed.replay("f") and keyed.replay("f").startswith(case.replay("f"))
    src = catalogue.source("all_reduce", "right_reference")
    answer = types.SimpleNamespace(module=load(src, "all_reduce", "right_reference", register=False), source=src)
    shown = dataclasses.replace(keyed, seed=0, key=0)
    world = SimWorld(3, policy=keyed.policy, seed=keyed.schedule_seed)

    def finish(r, value):
        if "raised" in value:
            raise RemoteRankRaised(value["raised"])
        return value

    talks = [rank_sim(answer, shown, r, inputs={"tensor": hidden[r]}) for r in range(3)]
    outputs = [v["output"] for v in world.run_remote(talks, finish, p2p=True)]
    assert verdict(keyed, hidden, outputs) is None
    assert verdict(case, public, outputs) is not None  # the sums of the hidden inputs, not the public ones


def test_the_bandwidth_check_bounds_traffic_from_both_sides():
    """More than a ring sends is not bandwidth-optimal; fewer than n elements from any rank means the
    sums did not come from the messages (each element must leave its rank once)."""
    from ch13lib.collective_cases import traffic_problem

    case = Case(3, (12,), "float32", 1)  # the ring bound: 2·2·4 = 16
    assert traffic_problem(case, [16, 16, 16]) is None
    assert traffic_problem(case, [12, 16, 14]) is None
    assert "not bandwidth-optimal" in traffic_problem(case, [24, 12, 12])
    assert "rank 1 sent only 11 elements" in traffic_problem(case, [16, 11, 16])
    assert "has to leave it at least once" in traffic_problem(case, [0, 0, 0])
    assert traffic_problem(Case(1, (5,)), [0]) is None
