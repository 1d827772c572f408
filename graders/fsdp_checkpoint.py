"""Hidden grader of `fsdp_checkpoint` (notebook 05): checkpointing a model under FSDP.

Every scenario trains the small float64 MLP of ``ch13lib.fsdp_train`` under FSDP (FULL_SHARD,
``device_id`` cpu, gloo) in a world of rank THREADS (``ch13lib.fsdp_world``: each thread has its
own real gloo process group), so a world costs tens of milliseconds and the student's functions
run as they are. The world watches every collective and every ``torch.save`` to a file path:

- a hang (a collective some ranks never call, or ranks calling different collectives at the
  same point) is reported the moment it is certain, by its cause and the student's line;
- rank 0's file write is held until every other rank waits for it in a collective or has
  returned, so a missing or misplaced barrier fails on every run;
- writes by other ranks are recorded with the rank that made them.

Save scenarios differ in world size (2, 3, 4), optimizer (Adam, AdamW), wrapping (one FSDP unit
or one per Linear), steps and epoch (including 0). Each file is checked against the gathered
parameters (bitwise) and against Adam's state in the same run without FSDP (1e-9), then resumed
at other world sizes (2→1, 2→4, 3→2, 4→3, and same-size resumes that must be bit for bit) and
trained on; the result must match the run that never stopped.

GPU runners (``CH13_DEVICE=gpu``): the same scenarios on CUDA with NCCL, one GPU per rank; world
sizes are capped at the number of GPUs (with one GPU everything runs at world size 1), and all
comparisons with the continued run use the tolerance, not bit equality.
"""
from __future__ import annotations

import os
import tempfile

# Imported before any student code runs: importing torch._dynamo rebinds torch.manual_seed, and
# FSDP and torch.distributed.checkpoint pull it in lazily; done during a test, that change would
# meet the sandbox's guard against monkeypatched libraries (kit/sandbox.py) mid-grading.
import torch._dynamo  # noqa: F401
import torch.distributed.checkpoint  # noqa: F401
import torch.distributed.checkpoint.state_dict  # noqa: F401

from graders.api import Answer, Fail, Grader, student_traceback

from ch13lib import fsdp_ckpt as ck
from ch13lib.fsdp_world import WorldError

grader = Grader("fsdp_checkpoint", timeout_s=150)
GUARD_S = 30.0      # last resort per world, for code that neither returns nor waits in a collective

# name -> save scenario (world, steps, more steps after the save, epoch, optimizer, wrapping, data)
SAVES = {
    "A": dict(world=2, steps=3, more=2, epoch=4, optimizer="adam", nested=False, data_seed=0),
    "B": dict(world=3, steps=2, more=3, epoch=11, optimizer="adamw", nested=True, data_seed=1),
    "C": dict(world=4, steps=1, more=2, epoch=0, optimizer="adam", nested=True, data_seed=2),
}
# (save scenario, resume world size, resume wrapping nested?)
RESUMES = [("A", 1, False), ("A", 4, True), ("A", 2, False), ("B", 2, False), ("B", 3, True),
           ("C", 3, False)]


def _gpu() -> bool:
    return os.environ.get("CH13_DEVICE") == "gpu"


def _cap(world: int) -> int:
    if not _gpu():
        return world
    import torch
    return max(1, min(world, torch.cuda.device_count()))


def _backend() -> str:
    return "nccl" if _gpu() else "gloo"


def _replay(save: ck.SaveRun, load_world: int | None = None, nested: bool | None = None) -> str:
    call = (f"ch13lib.fsdp_ckpt.self_check(save_checkpoint, load_checkpoint, "
            f"save_world={save.world}, load_world={load_world or 1}, steps={save.steps}, "
            f"more={save.more}, epoch={save.epoch}, optimizer={save.optimizer!r}, "
            f"nested={nested if nested is not None else save.nested})")
    where = save.describe() + (f"; resume at world size {load_world}" if load_world else "")
    return f"{where}\nreplay in the notebook: {call}"


def _world_fail(answer: Answer, err: WorldError, phase: str, example: str):
    exc = getattr(err, "exc", None)
    if isinstance(exc, NotImplementedError):
        raise NotImplementedError()
    if exc is not None:
        raise Fail(f"{phase} raised an exception on rank {err.rank}:\n"
                   + student_traceback(exc, answer.filename) + ck.hint(exc), example)
    raise Fail(err.message, example)


def _cache(answer: Answer) -> dict:
    if not hasattr(answer, "_fsdp_cache"):
        answer._fsdp_cache = {}
    return answer._fsdp_cache


def _save(answer: Answer, name: str) -> tuple[ck.SaveRun, str]:
    """Run save scenario ``name`` once per answer; (run, its directory)."""
    cache = _cache(answer)
    if name not in cache:
        mod = answer.module
        d = tempfile.mkdtemp(prefix=f"fsdp_{name}_")
        params = dict(SAVES[name], world=_cap(SAVES[name]["world"]))
        cache[name] = (ck.run_save(mod.save_checkpoint, d, backend=_backend(), guard_s=GUARD_S,
                                   **params), d)
    return cache[name]


def _saved_ok(answer: Answer, name: str) -> tuple[ck.SaveRun, str]:
    run, d = _save(answer, name)
    if run.error is not None:
        _world_fail(answer, run.error, "save_checkpoint", _replay(run))
    return run, d


def _file(answer: Answer, name: str):
    run, d = _saved_ok(answer, name)
    obj, why = ck.load_file(run.path, run.note)
    if why:
        raise Fail(why, _replay(run))
    return run, obj


@grader.test(4)
def file_format(answer: Answer) -> None:
    """torch.load(path) gives {"model", "optim", "epoch"}; "model" is the full state dict (keys,
    shapes, values equal to the gathered parameters) and loads into the plain model."""
    for name in SAVES:
        run, obj = _file(answer, name)
        problems = ck.file_problems(obj, run)
        if problems:
            raise Fail(problems[0], _replay(run))


@grader.test(3)
def optimizer_state(answer: Answer) -> None:
    """"optim" is the full optimizer state: one entry per parameter, full shapes, the values and
    step count of the same training run without FSDP."""
    for name in SAVES:
        run, obj = _file(answer, name)
        if not isinstance(obj, dict):
            raise Fail(f"torch.load(path) gave a {type(obj).__name__}, not a dict", _replay(run))
        problems = ck.optim_problems(obj, run)
        if problems:
            raise Fail(problems[0], _replay(run))


@grader.test(6)
def resume_equivalence(answer: Answer) -> None:
    """Resumed at other world sizes, training continues exactly like the run that never
    stopped (bit for bit at the same size and wrapping on CPU, 1e-9 otherwise)."""
    mod = answer.module
    done = set()
    for name, load_world, nested in RESUMES:
        run, _ = _saved_ok(answer, name)
        load_world = _cap(load_world)
        if (name, load_world, nested) in done:
            continue
        done.add((name, load_world, nested))
        res = ck.run_resume(mod.load_checkpoint, run.path, world=load_world, start=run.steps,
                            more=run.more, optimizer=run.optimizer, nested=nested,
                            data_seed=run.data_seed, backend=_backend(), guard_s=GUARD_S)
        example = _replay(run, load_world, nested)
        if res.error is not None:
            _world_fail(answer, res.error, "load_checkpoint", example)
        bitwise = not _gpu() and load_world == run.world and nested == run.nested
        problems = ck.resume_problems(run, res, bitwise)
        if problems:
            raise Fail(problems[0], example)


@grader.test(3)
def rank0_only_writes(answer: Answer) -> None:
    """Only rank 0 writes, and only the one file at path."""
    for name in SAVES:
        run, d = _saved_ok(answer, name)
        problems = ck.write_problems(run, d)
        if problems:
            raise Fail(problems[0], _replay(run))


@grader.test(2)
def complete_on_return(answer: Answer) -> None:
    """save_checkpoint returns on no rank before the file is complete (rank 0's write is held
    back until the others wait for it or return, so a missing barrier fails every time)."""
    for name in SAVES:
        run, _ = _saved_ok(answer, name)
        problems = ck.complete_problems(run)
        if problems:
            raise Fail(problems[0], _replay(run))


@grader.test(2)
def collectives_on_every_rank(answer: Answer) -> None:
    """save and load run at world sizes 2, 3 and 4 without a hang: every collective is called
    by every rank, in the same order (a hang is reported at once, by its cause)."""
    mod = answer.module
    for name in SAVES:
        run, _ = _saved_ok(answer, name)
    for name, world in (("C", 2), ("A", 3)):
        run, _ = _saved_ok(answer, name)
        world = _cap(world)
        res = ck.run_resume(mod.load_checkpoint, run.path, world=world, start=run.steps,
                            more=0, optimizer=run.optimizer, nested=run.nested,
                            data_seed=run.data_seed, backend=_backend(), guard_s=GUARD_S)
        if res.error is not None:
            _world_fail(answer, res.error, "load_checkpoint", _replay(run, world))
