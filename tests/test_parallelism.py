"""Notebook 07 (pipeline, tensor_parallel, zero1): the simulated process group's logical clock and
call log, the harnesses, the judge's references and diagnoses, the graders on the notebook's
reference solutions and stubs, and the self-checks.

Graders run in this process; the answer runs in their subject process (kit/subject.py), which
also starts the real gloo worlds. The whole catalogues are graded by tests/test_catalogues.py (and
by /tmp-style in-process runs of graders.load_grader(gid).run); here only a few entries whose
message matters most. GPU tests are marked ``gpu`` and skip without CUDA.
"""

from __future__ import annotations

import dataclasses
import os
import types

import nbformat
import pytest
import torch

import graders  # noqa: F401 - first: it puts source/ch13_04 on sys.path (ch13lib is not part of the installed kit)
from ch13lib import parallel_cases as pc
from ch13lib import parallel_checks, parallel_sim
from ch13lib.cell import load
from ch13lib.parallel_sim import observe_pipeline, observe_tp, observe_zero
from ch13lib.procgroup import CommError, SimWorld
from graders import _catalogue as catalogue
from graders._catalogue import source
from kit.harnesses import parallel_sim as grading_sim
from tests.inprocess import grade, references_pass_on_the_gpu, report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK = os.path.join(ROOT, "source", "ch13_04", "07_parallelism.ipynb")
GRADE_IDS = ["pipeline", "tensor_parallel", "zero1"]
FUNCTIONS = {"pipeline": "gpipe_step", "tensor_parallel": "tp_mlp", "zero1": "ZeroAdam"}


class _Cell:
    """A cell loaded in this process, shaped like the subject's Cell (kit/subject.py): ``module``,
    and ``load()`` for a fresh module (each rank of a threads world runs its own)."""

    def __init__(self, src: str, grade_id: str, name: str) -> None:
        self.source, self.grade_id, self.name, self.loads = src, grade_id, name, 0
        self.module = self.load()

    def load(self):
        self.loads += 1
        return load(self.source, self.grade_id, f"{self.name}_{self.loads}", register=False)


def cell(grade_id: str, name: str = "right_reference"):
    """A catalogue entry loaded in this process (tests only)."""
    return _Cell(source(grade_id, name), grade_id, name)


# ---- the logical clock and the call log ------------------------------------------------------------
def test_receive_completes_no_earlier_than_its_send():
    world = SimWorld(2)

    def fn(rank, comm):
        t = torch.zeros(1)
        if rank == 0:
            world.advance(0, 5, "work")
            comm.send(t, 1)  # posted at tick 5
            world.advance(0, 1, "more")
        else:
            comm.recv(t, 0)  # rank 1 was idle: it is now at tick 5
            world.advance(1, 2, "after")

    world.run(fn)
    assert world.clock == [6, 7] and world.length() == 7
    assert sorted((r, a, b) for r, a, b, _ in world.timeline) == [(0, 0, 5), (0, 5, 6), (1, 5, 7)]


def test_irecv_takes_the_send_tick_in_wait_and_a_late_receiver_keeps_its_own():
    world = SimWorld(2, policy="round_robin")
    seen = {}

    def fn(rank, comm):
        t = torch.zeros(1)
        if rank == 0:
            world.advance(0, 3)
            comm.isend(t, 1).wait()  # posted at tick 3
            comm.send(t, 1)  # posted at tick 3 too
        else:
            work = comm.irecv(t, 0)
            world.advance(1, 1)  # work done before the wait: tick 1
            work.wait()
            seen["after wait"] = world.clock[1]
            world.advance(1, 5)  # tick 8
            comm.recv(t, 0)  # its send is older than this rank's clock: no change

    world.run(fn)
    assert seen["after wait"] == 3 and world.clock == [3, 8]


def test_collectives_meet_at_the_latest_tick_and_all_reduce_sums_or_averages():
    world = SimWorld(3)
    out = [None] * 3

    def fn(rank, comm):
        world.advance(rank, rank * 2)
        t = torch.full((4,), float(rank + 1))
        comm.all_reduce(t)
        avg = torch.full((2,), float(rank))
        comm.all_reduce(avg, op="avg")
        out[rank] = (t, avg)

    world.run(fn, p2p=False, all_reduce=True)
    assert world.clock == [4, 4, 4]
    for t, avg in out:
        assert torch.equal(t, torch.full((4,), 6.0)) and torch.equal(avg, torch.full((2,), 1.0))
    calls = [(c["rank"], c["call"], c["numel"], c["op"]) for c in world.log]
    assert calls.count((0, "all_reduce", 4, "SUM")) == 1 and calls.count((2, "all_reduce", 2, "AVG")) == 1


def test_all_reduce_is_refused_where_not_offered():
    """Notebook 03's rs_ag exercise offers the two collectives only: all_reduce is refused, as send is."""
    with pytest.raises(CommError, match="does not offer: use only reduce_scatter_tensor and all_gather_into_tensor"):
        SimWorld(2).run(lambda r, comm: comm.all_reduce(torch.zeros(2)), p2p=False, collectives=True)


def test_the_log_records_point_to_point_calls():
    world = SimWorld(2)

    def fn(rank, comm):
        t = torch.zeros(3, dtype=torch.float64)
        comm.send(t, 1) if rank == 0 else comm.recv(t, 0)

    world.run(fn)
    assert [(c["rank"], c["call"], c["numel"], c["dtype"], c["peer"]) for c in world.log] in (
        [(0, "send", 3, "float64", 1), (1, "recv", 3, "float64", 0)],
        [(1, "recv", 3, "float64", 0), (0, "send", 3, "float64", 1)],
    )


# ---- pipeline ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("P,m", [(1, 1), (1, 3), (2, 1), (2, 4), (3, 3), (4, 2), (4, 5)])
def test_gpipe_reference_takes_exactly_2_m_plus_p_minus_1_ticks(P, m):
    case = pc.PipeCase(P, m, 2, (), "mse", P * 10 + m, True, "random", m)
    seen = observe_pipeline(cell("pipeline"), case)
    assert seen["length"] == case.bound() == 2 * (m + P - 1)
    assert pc.pipeline_verdict(case, seen) is None and pc.schedule_problem(case, seen) is None
    # every stage does m forwards and m backwards of one tick each
    for r in range(P):
        mine = [e for e in seen["timeline"] if e[0] == r]
        assert sorted(e[3] for e in mine) == ["B"] * m + ["F"] * m


def test_whole_batch_takes_2pm_ticks_and_the_message_draws_the_chart():
    case = pc.PipeCase(3, 4, 1, (), "mse", 5)
    seen = observe_pipeline(cell("pipeline", "wrong_whole_batch"), case)
    assert seen["length"] == 2 * 3 * 4
    problem = pc.schedule_problem(case, seen)
    assert "took 24 ticks" in problem and "2(m + P − 1)" in problem and "no two stages ever work" in problem
    chart = problem.split("idle):\n")[1]
    assert chart.splitlines()[1].startswith("rank 0") and " F3" in chart and " B0" in chart
    assert "Replay: check_pipeline_case(gpipe_step, stages=3" in problem


def test_pipeline_reference_is_a_full_batch_step_and_diagnoses_scaling():
    case = pc.PipeCase(2, 3, 2, (), "mse", 1, True)
    ref = pc.pipeline_reference(case)
    seen = {"returns": [None, {"kind": "float", "value": ref["loss"]}], "grads": [list(g) for g in ref["grads"]]}
    assert pc.pipeline_verdict(case, seen) is None
    times_m = dict(
        seen, grads=[[b.reshape(-1) + 3 * o for b, o in zip(ref["before"][r], ref["own"][r])] for r in range(2)]
    )
    assert "3× the full-batch gradient" in pc.pipeline_verdict(case, times_m)
    zeroed = dict(seen, grads=[list(o) for o in ref["own"]])
    assert "Do not zero or replace .grad" in pc.pipeline_verdict(case, zeroed)
    summed = dict(seen, returns=[None, {"kind": "float", "value": ref["loss"] * 3}])
    assert "summed, not averaged" in pc.pipeline_verdict(case, summed)


def test_pipeline_deadlock_names_the_waits():
    case = pc.PipeCase(2, 2)
    with pytest.raises(Exception, match="deadlock: no rank can move") as e:
        observe_pipeline(cell("pipeline", "wrong_recv_grad_before_send"), case)
    assert "wait-for cycle" in str(e.value) and "check_pipeline_case(gpipe_step" in str(e.value)


# ---- tensor parallelism -------------------------------------------------------------------------------
def test_tp_reference_output_and_one_all_reduce():
    for case in [pc.TPCase(1), pc.TPCase(3, (2, 2), 3, 6, 2, "float64"), pc.TPCase(4, (), 2, 8, 3)]:
        seen = observe_tp(cell("tensor_parallel"), case)
        assert pc.tp_verdict(case, seen["outputs"]) is None
        assert pc.tp_traffic_problem(case, seen["calls"]) is None
        if case.world_size > 1:
            assert all(len(c) == 1 and c[0]["call"] == "all_reduce" for c in seen["calls"])


def test_tp_diagnoses_b2_everywhere_and_the_mean():
    case = pc.TPCase(3, (2,), 4, 6, 3, "float64", 5)
    b2_everywhere = observe_tp(cell("tensor_parallel", "wrong_b2_every_rank"), case)
    assert "off by 2·b2" in pc.tp_verdict(case, b2_everywhere["outputs"])
    mean = observe_tp(cell("tensor_parallel", "wrong_mean"), case)
    assert "averaged, not summed" in pc.tp_verdict(case, mean["outputs"])


# ---- ZeRO-1 -----------------------------------------------------------------------------------------------
def test_adam_reference_matches_adam_by_hand_and_the_variants_differ():
    case = pc.ZeroCase(3, ((5,), (2,)), "float64", 3, 1e-2, (0.9, 0.999), 1e-8, 1e-6, 9)
    ref = pc.adam_reference(case)
    p = torch.cat([t.reshape(-1) for t in pc.make_params(case)])
    m, v = torch.zeros_like(p), torch.zeros_like(p)
    for s in range(case.steps):
        g = sum(torch.cat([x.reshape(-1) for x in pc.make_grads(case, s, r)]) for r in range(3)) / 3
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p = p - 1e-2 * (m / (1 - 0.9 ** (s + 1))) / ((v / (1 - 0.999 ** (s + 1))).sqrt() + 1e-8)
        assert float((p - ref[s]).abs().max()) < 1e-12
    for variant in pc.VARIANTS:
        assert float((pc.adam_reference(case, variant)[-1] - ref[-1]).abs().max()) > 1e-7, variant


@pytest.mark.parametrize(
    "name,message",
    [
        ("wrong_sum_not_mean", "summed, not averaged"),
        ("wrong_eps_in_sqrt", "eps is inside the square root"),
        ("wrong_no_bias_correction", "no bias correction"),
        ("wrong_uneven_split", "never changed"),
        ("wrong_own_gradient", "updated its shard with its own gradient"),
    ],
)
def test_zero_diagnoses(name, message):
    case = pc.ZeroCase(3, ((5,), (2,)), "float64", 2, 1e-3, (0.9, 0.999), 1e-8, 1e-6, 3)
    seen = observe_zero(cell("zero1", name), case)
    assert message in pc.zero_verdict(case, seen["steps"])


def test_zero_reference_state_traffic_and_in_place():
    case = pc.ZeroCase(4, ((7,),), "float32", 2)
    seen = observe_zero(cell("zero1"), case)
    assert pc.zero_verdict(case, seen["steps"]) is None
    state = pc.state_elements({"step": 2, "exp_avg": torch.zeros(2), "exp_avg_sq": torch.zeros(2)}, 4)
    assert seen["state_numel"] == [4] * 4 and seen["held"] == [state] * 4 and seen["moved"] == [[]] * 4
    assert pc.zero_state_problem(case, seen) is None and pc.zero_traffic_problem(case, seen["calls"]) is None
    full = observe_zero(cell("zero1", "wrong_full_state"), case)
    assert "at most 2·⌈N/W⌉ = 2·2 = 4" in pc.zero_state_problem(case, full)


# ---- the graders, the notebook and the self-checks ------------------------------------------------------
def test_catalogue_sizes():
    for gid in GRADE_IDS:
        names = [e.name for e in catalogue.entries(gid)]
        assert sum(n.startswith("wrong_") for n in names) >= 8, gid
        assert sum(n.startswith("right_") for n in names) >= 4, gid


def test_right_reference_is_the_notebooks_solution():
    from kit.answers import answer_cells, strip_solution_markers

    answers = answer_cells(nbformat.read(NOTEBOOK, as_version=4))
    assert sorted(answers) == sorted(GRADE_IDS)
    for gid in GRADE_IDS:
        body = "\n".join(line for line in source(gid, "right_reference").splitlines() if not line.startswith("# "))
        assert strip_solution_markers(answers[gid].source).strip() == body.strip(), gid


# The notebook's reference solutions (full marks) and its untouched stubs ("not implemented yet" from
# every test) are graded through plain `nbgrader autograde` by tests/test_pipeline.py, and every
# catalogue answer once by tests/test_catalogues.py: not again here.


@pytest.mark.slow
def test_self_checks_pass_the_references_and_say_not_implemented(capsys):
    refs = {gid: getattr(cell(gid).module, FUNCTIONS[gid]) for gid in GRADE_IDS}
    assert parallel_checks.check_gpipe_step(refs["pipeline"]) is True
    out = capsys.readouterr().out
    assert "All self-checks passed" in out and "rank 2" in out and "B3" in out  # the chart
    assert parallel_checks.check_tp_mlp(refs["tensor_parallel"]) is True
    assert parallel_checks.check_zero_adam(refs["zero1"]) is True

    def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
        raise NotImplementedError()

    capsys.readouterr()
    assert parallel_checks.check_gpipe_step(gpipe_step) is False
    assert "not implemented yet" in capsys.readouterr().out


def test_self_check_steps_aside_while_grading(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert parallel_checks.check_tp_mlp(lambda *a: None) is True
    assert capsys.readouterr().out.count("\n") == 1


@pytest.mark.gpu
def test_gpu_grading_of_the_references():
    """On a GPU runner: do the references pass with NCCL on CUDA tensors in the grade?"""
    references_pass_on_the_gpu(GRADE_IDS)


# ---- ranks in processes of their own: the judge as the world's broker --------------------------------
RELAYED_CASES = {
    "pipeline": [
        pc.PipeCase(3, 4, 1, (), "mse", 41, False, "round_robin"),
        pc.PipeCase(2, 2, 2, (), "cross_entropy", 7),
    ],
    "tensor_parallel": [pc.TPCase(3, (2, 2), 3, 6, 2, "float64", 72, "random", 1), pc.TPCase(2, (3,), 4, 4, 3)],
    "zero1": [pc.ZeroCase(3, ((3, 4), (4,), (2,)), "float64", 2, 1e-2, (0.9, 0.999), 1e-8, 1.0, 601, "random", 1)],
}
for _cases in RELAYED_CASES.values():  # and under a key, as the judge draws a relayed case's values
    _cases.append(dataclasses.replace(_cases[0], key=2**61 + 7))
HARNESSES = {"pipeline": "observe_pipeline", "tensor_parallel": "observe_tp", "zero1": "observe_zero"}


def _relayed(grade_id: str, answer, case, *, flow: bool = False) -> dict:
    """``case`` relayed rank by rank through run_remote (the ranks' halves in threads of this
    process, as each subject would run them), reported as the judge reports it: each rank is shown
    the case without its seed and key, and given its own inputs."""
    from ch13lib.procgroup import RemoteRankRaised
    from graders._parallelism import RELAYED, relayed_report

    harness = HARNESSES[grade_id]
    target, size_field, _, offers = RELAYED[harness]
    rank = getattr(grading_sim, target.split(":")[1])
    size = getattr(case, size_field)
    world = SimWorld(size, policy=case.policy, seed=case.schedule_seed)
    if flow:
        world.flow = []

    def finish(r, value):
        if "raised" in value:
            raise RemoteRankRaised(value["raised"])
        return value

    shown = dataclasses.replace(case, seed=0, key=0)
    # each rank a process of its own in a real subject: a module of its own here
    own = [types.SimpleNamespace(module=answer.load(), grade_id=answer.grade_id) for _ in range(size)]
    ranks = [rank(own[r], shown, r, inputs=pc.rank_inputs(case, r)) for r in range(size)]
    values = world.run_remote(ranks, finish, p2p=True, **offers)
    return relayed_report(harness, case, values, world)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("gid,name", [(g, e.name) for g in GRADE_IDS for e in catalogue.entries(g)])
def test_the_relayed_world_sees_what_the_threads_world_sees(gid, name):
    """Every catalogue answer, relayed rank by rank, reports the same values, calls (without the
    storage addresses, which differ between processes), clock and timeline as on threads, or
    fails where the threads world fails."""
    for case in RELAYED_CASES[gid]:
        answer = cell(gid, name)  # one world each: a threads world's ranks keep their modules between worlds
        try:
            threads = getattr(parallel_sim, HARNESSES[gid])(answer, case)
        except Exception:  # noqa: BLE001 - a deadlock or a rank's exception: the relayed world fails too
            with pytest.raises(Exception):  # noqa: B017
                _relayed(gid, answer, case)
            continue
        relayed = _relayed(gid, answer, case)
        for calls in (threads.get("calls") or []) + (relayed.get("calls") or []):
            for c in calls:
                c.pop("storage", None), c.pop("offset", None)
        assert _same(relayed, threads), (name, case)


# ---- hidden values: what a relayed rank is given ---------------------------------------------------
def test_a_hidden_case_keeps_its_sizes_and_draws_other_values():
    from graders._hidden import hidden

    case = pc.TPCase(2, (3,), 4, 4, 3, "float32", 5)
    keyed = hidden(case)
    assert keyed.key and hidden(keyed) == keyed and hidden(case) == keyed  # deterministic, idempotent
    assert dataclasses.replace(keyed, key=0) == case
    assert hidden(dataclasses.replace(case, seed=6)).key != keyed.key
    public, secret = pc.make_mlp(case), pc.make_mlp(keyed)
    assert all(public[k].shape == secret[k].shape and not torch.equal(public[k], secret[k]) for k in public)
    assert "key" not in keyed.replay() and keyed.replay().startswith(case.replay())  # never printed
    assert "hidden ones" in keyed.replay() and "hidden ones" not in case.replay()


def test_hidden_values_are_the_submissions_own():
    """Keyed to the answer cell's text as well as the installation's secret, and every grader test
    runs keyed to its cell: with one key per installation, a rank's exception could carry the hidden
    sums out in one grading's feedback and a later cell answer from a table."""
    from graders import api
    from graders._hidden import hidden, keyed_to

    case = pc.TPCase(2, (3,), 4, 4, 3, "float32", 5)
    with keyed_to("def f():\n    pass\n"):
        one, again = hidden(case), hidden(case)
    with keyed_to("def f():\n    pass\n# TABLE = {...}\n"):
        other = hidden(case)
    assert one == again and one.key != other.key and hidden(case).key not in (one.key, other.key)

    seen = {}

    class _Subject:  # what an Answer and run_test read of a subject; the probe runs nothing in it
        gpu = False

        def new_test(self):
            pass

    def probe(answer):
        seen[answer.source] = hidden(case).key

    for text in ("a = 1\n", "a = 2\n"):
        result = api.run_test(api.Test("probe", 1, probe, ""), api.Answer("probe", text, _Subject()))
        assert result.passed
    assert seen == {"a = 1\n": _keyed("a = 1\n", case), "a = 2\n": _keyed("a = 2\n", case)}


def _keyed(source, case):
    from graders._hidden import hidden, keyed_to

    with keyed_to(source):
        return hidden(case).key


def test_the_judge_refuses_to_send_a_key_to_a_threads_world():
    from graders._parallelism import observe

    with pytest.raises(ValueError, match="relayed only"):
        observe(None, "observe_tp", pc.TPCase(2, key=3))


@pytest.mark.parametrize(
    "case",
    [
        pc.PipeCase(3, 2, 2, (), "cross_entropy", 9, True),
        pc.TPCase(3, (2,), 4, 6, 2),
        pc.ZeroCase(3, ((3, 4), (2,)), "float32", 2),
    ],
)
def test_a_rank_is_given_its_own_inputs_and_no_one_elses(case):
    """What rank r receives is its part alone: no tensor of one rank's inputs appears in another's
    (ZeRO's shared starting parameters aside), and rebuilding rank r's part from the case gives it."""
    size = getattr(case, "stages", None) or case.world_size
    given = [pc.rank_inputs(case, r) for r in range(size)]

    def tensors(x):
        if isinstance(x, torch.Tensor):
            yield x
        elif isinstance(x, (list, tuple)):
            for y in x:
                yield from tensors(y)
        elif isinstance(x, dict):
            for k, y in x.items():
                if k != "params":
                    yield from tensors(y)

    for r in range(size):
        for q in range(size):
            if q != r and isinstance(case, pc.TPCase):  # x and b2 are every rank's
                mine = given[r]["args"][1:4]
                assert not any(torch.equal(a, b) for a in mine for b in tensors(given[q]["args"][1:4]))
            elif q != r:
                assert not any(
                    a.shape == b.shape and torch.equal(a, b) for a in tensors(given[r]) for b in tensors(given[q])
                )
    if isinstance(case, pc.PipeCase):
        assert given[0]["batch"] is not None and all(g["batch"] is None for g in given[1:])
        assert given[-1]["target"] is not None and all(g["target"] is None for g in given[:-1])
        stage = pc.make_stages(case)[1]
        assert torch.equal(given[1]["weight"], stage.linear.weight) and torch.equal(
            given[1]["grads"][1], stage.linear.bias.grad
        )


def _corpus_cell(name: str):
    src = open(os.path.join(os.path.dirname(__file__), "redteam", name + ".py")).read()
    return _Cell(src, "pipeline", name)


@pytest.mark.parametrize(
    "answer,problem",
    [
        ("right_reference", None),
        ("right_reverse_backward_isend", None),
        ("right_helpers_irecv", None),
        ("c_pipeline_charges_before_data", "while it had received"),
        ("c_pipeline_bypass_padded", "when its stage's forward had run on only 0"),
    ],
)
def test_a_relayed_stage_is_charged_only_for_the_data_it_has(answer, problem):
    """The broker's record of each rank's data flow: right answers (headers, irecv, a reversed
    backward) follow their data; charges made on zeros before the data came, or sends before the
    stage ran, are found (parallel_cases.dataflow_problem), on hidden values too."""
    ans = cell("pipeline", answer) if answer.startswith("right") else _corpus_cell(answer)
    for case in (pc.PipeCase(3, 3, 2, (2, 4, 3, 2), "mse", 42, False, "round_robin"), pc.PipeCase(2, 4, 1, key=5)):
        seen = _relayed("pipeline", ans, case, flow=True)
        got = pc.dataflow_problem(case, seen["flow"])
        assert (got is None) if problem is None else (problem in got), (case, got)
        assert len(seen["flow"]) > 0


def test_a_state_counts_every_byte_and_every_node_it_carries():
    """What crosses between steps is plain data, measured in the parameters' elements: tensors by
    their bytes whatever their dtype, a number by its 8 bytes (a big int all of its bytes), text and
    bytes theirs, and every node at least one: keys, None, bools and containers too, so that no
    shape of the data carries more than it costs."""
    count = pc.state_elements
    # the dict 1, the step's 8 bytes 2, 5 + 5, and the keys' 4, 7 and 10 bytes: 1 + 2 + 3
    assert count({"step": 3, "exp_avg": torch.zeros(5), "exp_avg_sq": torch.zeros(5)}, 4) == 19
    assert count([torch.zeros(4, dtype=torch.float64)], 4) == 1 + 8  # float32 parameters: two per element
    assert count(torch.zeros(4, dtype=torch.int8), 4) == 1 and count(2 ** (64 * 100), 8) == 101
    assert count("x" * 80, 8) == 10 and count(b"x" * 80, 8) == 10 and count(0.5, 4) == 2
    bits = [True, False] * 32  # 64 bits as bools, or as None and []: 64 elements at least
    assert count(bits, 8) == 65 and count([[] if b else None for b in bits], 8) == 65
    assert count((None, [], {}, ()), 8) == 5


FRESH = """
import secrets

LOADED = secrets.token_hex(8)  # one per load of the cell: per process in a subject
"""


@pytest.mark.deep  # a whole zero1 grading; its attack twin is tests/redteam/c_zero1_state_beside_state_dict_global.py
def test_each_step_of_the_state_test_runs_in_a_fresh_process():
    """The state test hands a rank nothing but the parameters, the step's gradients and the last
    step's state_dict(): a cell that finds its own load's token in the state it is given took the
    last step in the same process (as the threads world does), and fails there."""
    src = source("zero1", "right_reference").replace("import torch\n", "import torch\n" + FRESH, 1)
    src = src.replace(
        '        self.t = state["step"]\n',
        '        if state["loaded"] == LOADED:\n'
        '            raise RuntimeError("the last step ran in this process")\n'
        '        self.t = state["step"]\n',
    ).replace('return {"step": self.t,', 'return {"loaded": LOADED, "step": self.t,')
    assert src.count("LOADED") == 3
    results = {r.test: r for r in grade("zero1", src)}
    assert results["sharded_state_and_traffic"].passed, report(results.values())
    assert "the last step ran in this process" in results["matches_ddp_adam"].message
