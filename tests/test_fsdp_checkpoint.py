"""Direct tests of the `fsdp_checkpoint` grader (notebook 05) and its public helpers.

Every catalogue file is graded in-process with ``graders.load_grader(...).run``: a ``pass`` file
must get full marks, a ``fail`` file must lose points and show every ``# message:``. Each world
is a few rank threads in this process, so the whole module takes seconds.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import types

import pytest

import graders  # also puts source/ch13_04 on sys.path (ch13lib is not part of the installed kit)
from graders._catalogue import entries
from graders._catalogue import source as catalogue_source
from graders.screen import screen

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GID = "fsdp_checkpoint"
CATALOGUE = entries(GID)


def grade(source: str):
    return list(graders.load_grader(GID).run(source))


def test_catalogue_answers_pass_the_static_screen():
    """The screen flags nothing in any catalogue answer, right or wrong (they are graded, once, by
    tests/test_catalogues.py)."""
    for entry in CATALOGUE:
        assert screen(entry.source) == [], entry.name


def test_points_total_20():
    assert graders.load_grader(GID).max_points == 20


def test_the_release_stub_gives_nothing_away():
    from kit.answers import stub as release_stub

    stub = release_stub(GID)
    assert "NotImplementedError" in stub and "dist.barrier" not in stub


# The notebook's reference solutions (full marks) and its untouched stubs ("not implemented yet" from
# every test) are graded through plain `nbgrader autograde` by tests/test_pipeline.py, and every
# catalogue answer once by tests/test_catalogues.py: not again here.


def test_hang_is_reported_by_cause_not_by_timeout(monkeypatch):
    monkeypatch.setenv("CH13_LANG", "en")  # the message's first word is the English one's (zh: "挂起:")
    source = catalogue_source(GID, "wrong_state_dict_rank0_only")
    results = grade(source)
    for r in results:
        assert r.message.startswith("hang:"), r.message
        assert "model_state = model.state_dict()" in r.message  # the student's own line
        assert "no progress for" not in r.message  # not the last-resort guard


def test_offload_to_cpu_on_cpu_gets_a_hint():
    source = catalogue_source(GID, "right_reference")
    source = source.replace(
        "FullStateDictConfig(offload_to_cpu=False, rank0_only=True)",
        "FullStateDictConfig(offload_to_cpu=True, rank0_only=True)",
    )
    results = grade(source)
    assert any("offload_to_cpu=False" in r.message for r in results if not r.passed)


def test_held_write_makes_the_missing_barrier_fail_at_every_world_size():
    """The race is made deterministic: every save scenario reports the early return."""
    from ch13lib import fsdp_ckpt
    from ch13lib.cell import load

    source = catalogue_source(GID, "wrong_no_barrier")
    mod = load(source, GID, register=False)
    for world in (2, 3, 4):
        with tempfile.TemporaryDirectory() as d:
            run = fsdp_ckpt.run_save(mod.save_checkpoint, d, world=world)
            assert run.error is None
            assert all(run.incomplete[r] for r in range(1, world)), run.incomplete
            assert run.incomplete[0] is None


@pytest.mark.parametrize("shared_lock", [False, True])
def test_ranks_that_all_open_the_file_leave_rank0s_bytes_every_time(shared_lock):
    """Rank 0 runs last inside save_checkpoint: when every rank writes the path with ``open``, the
    file is rank 0's, whatever the thread scheduler does. The other ranks even write late here
    (unheld, theirs would be the file, or a torn mix); with a lock of the cell's around the write
    (the rank threads share it), a hold at the write itself would wait inside the lock while the
    other ranks wait for it: a hang."""
    import threading
    import time

    import torch.distributed as dist

    from ch13lib import fsdp_ckpt

    lock = threading.Lock() if shared_lock else contextlib.nullcontext()

    def save_checkpoint(model, optimizer, epoch, path):
        rank = dist.get_rank()
        if rank:
            time.sleep(0.2)
        with lock:
            with open(path, "wb") as f:
                f.write(b"%d" % rank * (100 * (rank + 1)))
        dist.barrier()

    for world in (2, 3):
        with tempfile.TemporaryDirectory() as d:
            run = fsdp_ckpt.run_save(save_checkpoint, d, world=world, guard_s=10)
            assert run.error is None, run.error.message
            with open(run.path, "rb") as f:
                assert f.read() == b"0" * 100
            assert sorted(r for r, _, _ in run.writes) == list(range(world))


def test_a_helper_thread_the_world_stops_ends_in_silence():
    """A world that gives up raises _Aborted where it holds a rank's helper thread; printed by
    threading.excepthook, its traceback would run ast.parse, which the grading subject counts as the
    cell asking for `compile`, and a right answer would be "not graded ... A TA will review it".
    In a fresh process: pytest puts an excepthook of its own in place around each test."""
    code = (
        "import threading\n"
        "from ch13lib import fsdp_world\n"
        "def stopped():\n    raise fsdp_world._Aborted()\n"
        "def failing():\n    raise ValueError('the cell s own error')\n"
        "for target in (stopped, failing):\n"
        "    t = threading.Thread(target=target)\n    t.start()\n    t.join()\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "source", "ch13_04"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "_Aborted" not in proc.stderr
    assert "the cell s own error" in proc.stderr  # any other exception is still reported


def test_world_catches_a_collective_only_rank0_calls():
    import torch
    import torch.distributed as dist

    from ch13lib.fsdp_world import WorldError, run_world

    def fn(w):
        w.sync()
        with w.phase("demo"):
            if dist.get_rank() == 0:
                dist.all_reduce(torch.ones(2))

    with pytest.raises(WorldError) as e:
        run_world(3, fn)
    assert e.value.kind == "hang"
    assert "rank 0 called all_reduce" in e.value.message
    assert "rank 1 returned from demo after only 0 collective(s)" in e.value.message


def test_self_check_prints_and_stands_aside_while_grading(monkeypatch):
    from ch13lib import fsdp_ckpt

    mod = types.ModuleType("nb_answer")
    exec(catalogue_source(GID, "right_reference"), mod.__dict__)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert fsdp_ckpt.self_check(mod.save_checkpoint, mod.load_checkpoint, load_world=3)
    assert "✘" not in out.getvalue() and out.getvalue().count("✔") >= 6

    def stub(*a, **k):
        raise NotImplementedError()

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert not fsdp_ckpt.self_check(stub, stub)
    assert "not implemented yet" in out.getvalue()

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fsdp_ckpt.self_check(stub, stub)
    assert len(out.getvalue().strip().splitlines()) == 1


def test_self_check_names_the_optimizer():
    from ch13lib import fsdp_ckpt

    mod = types.ModuleType("nb_answer")
    exec(catalogue_source(GID, "right_reference"), mod.__dict__)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert fsdp_ckpt.self_check(mod.save_checkpoint, mod.load_checkpoint, optimizer="adamw")
    assert "equal to AdamW's without FSDP" in out.getvalue() and "Adam's" not in out.getvalue()


def test_subject_side_reports_plain_data_and_a_fresh_subject_saves_again():
    """observe_save / observe_resume (run in the subject) send only plain data; the judge loads
    the file's bytes itself. A resume whose save directory is gone (a restarted subject has a new
    /tmp) saves again first."""
    import shutil

    import torch

    from ch13lib import fsdp_ckpt
    from kit import wire
    from kit.harnesses.fsdp_ckpt import observe_resume, observe_save
    from kit.subject import Cell

    source = catalogue_source(GID, "right_reference")
    cell = Cell(GID, source)
    from ch13lib import fsdp_train

    scenario = dict(world=2, steps=2, more=1, epoch=7, optimizer="adamw", nested=True)
    data = wire.decode(wire.encode(fsdp_train.Data.drawn(3, 0, 3).to_wire())[wire.HEADER.size :])
    with tempfile.TemporaryDirectory() as d:
        seen = observe_save(cell, directory=os.path.join(d, "s"), data=data, **scenario)
        seen = wire.decode(wire.encode(seen)[wire.HEADER.size :])
        assert seen["error"] is None and seen["file"]["kind"] == "file"
        assert list(seen["listing"]) == ["ckpt.pt"] and all(r == 0 for r, _, _ in seen["writes"])
        obj, why = fsdp_ckpt.load_observed(seen["file"])
        assert why is None and obj["epoch"] == 7
        shutil.rmtree(seen["directory"])
        later = fsdp_train.Data.drawn(3, 2, 1, with_init=False).to_wire()  # the resume's batches only
        save = dict(scenario, directory=seen["directory"], data=data)  # ``data``: for the save again
        got = observe_resume(cell, save, world=3, more=1, nested=False, data=later)
        got = wire.decode(wire.encode(got)[wire.HEADER.size :])
        assert got["error"] is None and got["epochs"] == [("value", 7)] * 3
        for name, want in seen["saved"].items():
            assert torch.equal(got["loaded"][name], want)


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available() and torch.distributed.is_nccl_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU and NCCL")
def test_gpu_reference_passes_and_wrong_fails_on_nccl():
    from kit.grading import grade_cell

    for name, want_full in (
        ("right_reference.py", True),
        ("wrong_raw_sharded_optim.py", False),
        ("wrong_no_optim_state.py", False),
    ):
        source = catalogue_source(GID, name)
        v = grade_cell(GID, source, gpu=True, sandbox=False)
        assert (v.score == v.max_score) == want_full, v.report()


def test_gpu_check_script_skips_cleanly_without_a_gpu():
    if _has_cuda():
        pytest.skip("a GPU is present: the script runs for real (gpu/check_fsdp_checkpoint.py)")
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "gpu", "check_fsdp_checkpoint.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and "no GPU: skipped" in out.stdout


def test_last_resort_guard_for_code_that_neither_returns_nor_waits():
    import threading

    from ch13lib.fsdp_world import WorldError, run_world

    stop = threading.Event()

    def fn(w):
        w.sync()
        with w.phase("spin"):
            if w.rank == 1:
                while not stop.wait(0.01):  # busy, never in a collective, never returning
                    pass

    try:
        with pytest.raises(WorldError) as e:
            run_world(2, fn, guard_s=1.0)
    finally:
        stop.set()
    assert e.value.kind == "timeout"
    assert "rank 1 is running spin" in e.value.message
