"""Hidden grader of `fsdp_checkpoint` (notebook 05): checkpointing a model under FSDP.

Every scenario trains the small float64 MLP of ``ch13lib.fsdp_train`` under FSDP (FULL_SHARD,
``device_id`` cpu, gloo) in a world of rank threads (``ch13lib.fsdp_world``: each thread has its
own real gloo process group). The worlds run in the SUBJECT process, beside the student's cell
(``kit.harnesses.fsdp_ckpt.observe_save`` / ``observe_resume``); this judge runs no student code.
The world watches every collective and every ``torch.save`` to a file path:

- a hang (a collective some ranks never call, or ranks calling different collectives at the
  same point) is reported the moment it is certain, by its cause and the student's line;
- rank 0's file write is held until every other rank waits for it in a collective or has
  returned, so a missing or misplaced barrier fails on every run;
- writes by other ranks are recorded with the rank that made them.

The subject sends back raw observations: the parameters at the moment of the save and after the
run went on, the file's bytes and the directory's listing, who wrote what, the file's state when
each rank returned, each rank's exception or the hang, and after a resume the epoch each rank
returned and the loaded and final parameters. The judge loads the file itself
(``torch.load(..., weights_only=True)``), recomputes the same training without FSDP (the
parameters and Adam's state; every run must agree with it to 1e-9) and decides.

Save scenarios differ in world size (2, 3, 4), optimizer (Adam, AdamW), wrapping (one FSDP unit
or one per Linear), steps and epoch (including 0). Each file is checked against the gathered
parameters (bitwise) and against Adam's state in the same run without FSDP (1e-9), then resumed
at other world sizes (2→1, 2→4, 3→2, 4→3, and same-size resumes that must be bit for bit) and
trained on; the result must match the run that never stopped.

Graded on a GPU (``answer.gpu``: ``python -m graders --gpu``): the same scenarios on CUDA with
NCCL, one GPU per rank; world sizes are capped at the number of GPUs (with one GPU everything runs
at world size 1), and all comparisons with the continued run use the tolerance, not bit equality.
"""

from __future__ import annotations

import functools
import hashlib

import torch

from ch13lib import fsdp_ckpt as ck
from ch13lib import fsdp_train as ft
from ch13lib.lang import Both, Messages, say
from graders._hidden import hidden_seed
from graders.api import NOT_IMPLEMENTED, Answer, Fail, Grader
from kit.harnesses import fsdp_ckpt as harness

grader = Grader("fsdp_checkpoint", timeout_s=150, harness=("kit.harnesses.fsdp_ckpt",))

# What this grader says itself, in the course's language (ch13lib/lang.py); the checks' own
# sentences are ch13lib.fsdp_ckpt's.
M = Messages(
    resume_at=("; 在 world size {world} 下恢复", "; resume at world size {world}"),
    replay=("在 notebook 中重现:", "replay in the notebook:"),
    raised_on_rank=("{phase} 在 rank {rank} 上抛出了异常:", "{phase} raised an exception on rank {rank}:"),
    params_expected=("参数为 {got}, 应为 {want}", "parameters {got}, expected {want}"),
    not_tensor=("'{name}' 不是 {shape} {dtype} 张量", "'{name}' is not a {shape} {dtype} tensor"),
    incomplete_result=(
        "恢复后的运行报告的结果不完整 (每个 rank 一个返回值, 以及参数)",
        "the resumed run reported an incomplete result (one return value per rank and the parameters)",
    ),
    changed_before_save=(
        "save_checkpoint 时模型的参数与不用 FSDP 训练同样 {steps} 步的结果不同 ({off}): 单元在保存之前改变了训练",
        "the model's parameters at the moment of save_checkpoint are not those of the same {steps} step(s) of "
        "training without FSDP ({off}): the cell changed the training before the save",
    ),
    not_a_dict=("torch.load(path) 得到的是 {type}, 不是字典", "torch.load(path) gave a {type}, not a dict"),
    changed_after_save=(
        "save_checkpoint 返回之后, 同一次运行接下来的 {more} 步没有像不存检查点的训练那样继续 ({off}): "
        "save_checkpoint 必须让模型和优化器保持原样",
        "after save_checkpoint returned, {more} more step(s) of the same run did not continue like training "
        "without a checkpoint ({off}): save_checkpoint must leave the model and the optimizer as they were",
    ),
)
GUARD_S = 30.0  # last resort per world, for code that neither returns nor waits in a collective

# name -> save scenario (world, steps, more steps after the save, epoch, optimizer, wrapping, data)
SAVES = {
    "A": dict(world=2, steps=3, more=2, epoch=4, optimizer="adam", nested=False),
    "B": dict(world=3, steps=2, more=3, epoch=11, optimizer="adamw", nested=True),
    "C": dict(world=4, steps=1, more=2, epoch=0, optimizer="adam", nested=True),
}
# (save scenario, resume world size, resume wrapping nested?)
RESUMES = [("A", 1, False), ("A", 4, True), ("A", 2, False), ("B", 2, False), ("B", 3, True), ("C", 3, False)]


def _cap(answer: Answer, world: int) -> int:
    if not answer.gpu:
        return world
    return max(1, min(world, torch.cuda.device_count()))


def _backend(answer: Answer) -> str:
    return "nccl" if answer.gpu else "gloo"


def _replay(save: ck.SaveRun, load_world: int | None = None, nested: bool | None = None) -> str:
    # One line that runs where it is pasted: the notebook binds no name `ch13lib`. The resume's
    # wrapping is its own where it differs from the save's.
    load_nested = "" if nested is None or nested == save.nested else f", load_nested={nested}"
    call = (
        f"from ch13lib.fsdp_ckpt import self_check; self_check(save_checkpoint, load_checkpoint, "
        f"save_world={save.world}, load_world={load_world or 1}, steps={save.steps}, "
        f"more={save.more}, epoch={save.epoch}, optimizer={save.optimizer!r}, "
        f"nested={save.nested}{load_nested})"
    )
    where = save.describe()
    if load_world:
        more = M.both("resume_at", world=load_world)
        where = Both(where[0] + more[0], where[1] + more[1])
    return f"{say(*where)}\n{M('replay')} {call}"


def _world_fail(error: dict, phase: str, example: str):
    """Fail with what the subject saw go wrong in a world: a rank's exception or a hang."""
    exc = error.get("exc")
    if exc is not None:
        if exc.get("type") == "NotImplementedError":
            raise Fail(NOT_IMPLEMENTED)
        raise Fail(
            M("raised_on_rank", phase=phase, rank=error.get("rank"))
            + "\n"
            + (exc.get("traceback") + "\n" if exc.get("traceback") else "")
            + f"{exc.get('type')}: {exc.get('message')}"
            + ck.hint(exc.get("message")),
            example,
        )
    raise Fail(str(error.get("message")), example)


# ---------------------------------------------------------------- the reference, recomputed here


@functools.cache
def _reference(steps: int, optimizer: str, data_seed: int) -> dict[str, torch.Tensor]:
    """The full parameters after ``steps`` steps of the same training without FSDP."""
    model, _ = ft.plain_run(steps, seed=data_seed, kind=optimizer, data_seed=data_seed)
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _off_reference(got: dict | None, want: dict) -> Both | str | None:
    """'name: max |diff| d' where ``got`` is not ``want`` within the tolerance, else None."""
    if not isinstance(got, dict) or set(got) != set(want):
        return M.both("params_expected", got=sorted(got) if isinstance(got, dict) else repr(got), want=sorted(want))
    for name, w in want.items():
        g = got[name]
        if not isinstance(g, torch.Tensor) or g.shape != w.shape or g.dtype != w.dtype:
            return M.both("not_tensor", name=name, shape=list(w.shape), dtype=w.dtype)
        if not torch.allclose(g, w, rtol=ck.RTOL, atol=ck.ATOL):
            return f"'{name}': max |diff| {(g - w).abs().max().item():.3g}"
    return None


# ---------------------------------------------------------------- observations from the subject


def _cache(answer: Answer) -> dict:
    if not hasattr(answer, "_fsdp_cache"):
        answer._fsdp_cache = {}
    return answer._fsdp_cache


def _scenario(answer: Answer, name: str) -> dict:
    return dict(SAVES[name], world=_cap(answer, SAVES[name]["world"]), data_seed=_data_seed(name))


def _data_seed(name: str) -> int:
    """A save scenario's initial weights and batches, drawn from a seed no subject can predict
    (graders/_hidden.py; below 2**48, so that fsdp_train's generator seeds stay in range). With the
    public seeds 0, 1 and 2 a load_checkpoint rebuilt Adam's state by replaying the training from
    them, so a file without the optimizer would resume exactly, as
    ddp_average's batches could be rebuilt from a public seed. The feedback's replay uses public
    values (ch13lib.fsdp_ckpt.self_check)."""
    return hidden_seed(f"fsdp_checkpoint/{name}") % 2**48


def _save(answer: Answer, name: str) -> tuple[ck.SaveRun, dict]:
    """Run save scenario ``name`` once per answer, in the subject; (run, the raw observation)."""
    cache = _cache(answer)
    if name not in cache:
        answer.require("save_checkpoint", needs="`save_checkpoint(model, optimizer, epoch, path)`")
        params = _scenario(answer, name)
        shown = {k: v for k, v in params.items() if k != "data_seed"}  # the seed stays here: tensors go
        data = ft.Data.drawn(params["data_seed"], 0, params["steps"] + params["more"])
        seen = answer.run(
            "kit.harnesses.fsdp_ckpt:observe_save",
            tag=name,
            backend=_backend(answer),
            guard_s=GUARD_S,
            data=data.to_wire(),
            **shown,
        )
        run = ck.SaveRun(path=seen["path"], **params)
        run.writes = [tuple(w) for w in seen["writes"]]
        run.returned = dict(seen["returned"])
        final = seen["file"]["bytes"]  # the file as the save left it, hashed here, by the judge
        final = hashlib.sha256(final).hexdigest() if isinstance(final, bytes) else None
        run.incomplete = {r: ck.incomplete_why(st, final) for r, st in run.returned.items()}
        run.layout = seen["layout"]
        run.note = ck.layout_text(run.layout)
        run.saved, run.final = seen["saved"], seen["final"]
        cache[name] = (run, seen)
    return cache[name]


def _saved_ok(answer: Answer, name: str) -> tuple[ck.SaveRun, dict]:
    run, seen = _save(answer, name)
    if seen["error"] is not None:
        _world_fail(seen["error"], "save_checkpoint", _replay(run))
    return run, seen


def _file(answer: Answer, name: str):
    run, seen = _saved_ok(answer, name)
    obj, why = ck.load_observed(seen["file"], run.note)
    if why:
        raise Fail(why, _replay(run))
    return run, obj


def _resume(answer: Answer, run: ck.SaveRun, seen: dict, world: int, more: int, nested: bool) -> ck.ResumeRun:
    """load_checkpoint at ``world`` ranks on the file of ``run``, in the subject."""
    answer.require("load_checkpoint", needs="`load_checkpoint(model, optimizer, path)`")
    save = {k: getattr(run, k) for k in ("world", "steps", "more", "epoch", "optimizer", "nested")}
    # In a subject that never saved: the file's bytes, as the save left them, are all it gets. A
    # load_checkpoint that restored Adam from a dict the save kept in memory would resume exactly without
    # the optimizer in the file. And of the data, only the batches of the steps it trains: with a seed
    # (read off a generator) it could replay the training.
    # Only where the judge has no bytes (a folder at path, a file past FILE_CAP) does the sibling
    # save again first, and so get the save's data too.
    if seen["file"]["bytes"] is None:
        save["data"] = ft.Data.drawn(run.data_seed, 0, run.steps + run.more).to_wire()
    got = answer.run_fresh(
        "kit.harnesses.fsdp_ckpt:observe_resume",
        dict(save, directory=seen["directory"]),
        data=ft.Data.drawn(run.data_seed, run.steps, more, with_init=False).to_wire(),
        file=seen["file"]["bytes"],
        world=world,
        more=more,
        nested=nested,
        backend=_backend(answer),
        guard_s=GUARD_S,
    )
    example = _replay(run, world, nested)
    if got["error"] is not None:
        _world_fail(got["error"], got["phase"], example)
    res = ck.ResumeRun(world, nested)
    res.epochs = [harness.epoch_from_observation(e) for e in got["epochs"]]
    res.loaded, res.final = got["loaded"], got["final"]
    if len(res.epochs) != world or not isinstance(res.loaded, dict) or not isinstance(res.final, dict):
        raise Fail(M("incomplete_result"), example)
    return res


# ---------------------------------------------------------------- tests


@grader.test(4)
def file_format(answer: Answer) -> None:
    """torch.load(path) gives {"model", "optim", "epoch"}; "model" is the full state dict (keys,
    shapes, values equal to the gathered parameters) and loads into the plain model."""
    for name in SAVES:
        run, obj = _file(answer, name)
        off = _off_reference(run.saved, _reference(run.steps, run.optimizer, run.data_seed))
        if off:
            raise Fail(
                M("changed_before_save", steps=run.steps, off=off),
                _replay(run),
            )
        problems = ck.file_problems(obj, run)
        if problems:
            raise Fail(problems[0], _replay(run))


@grader.test(3)
def optimizer_state(answer: Answer) -> None:
    """ "optim" is the full optimizer state: one entry per parameter, full shapes, the values and
    step count of the same training run without FSDP."""
    for name in SAVES:
        run, obj = _file(answer, name)
        if not isinstance(obj, dict):
            raise Fail(M("not_a_dict", type=type(obj).__name__), _replay(run))
        problems = ck.optim_problems(obj, run)
        if problems:
            raise Fail(problems[0], _replay(run))


@grader.test(6)
def resume_equivalence(answer: Answer) -> None:
    """Resumed at other world sizes, training continues exactly like the run that never
    stopped (bit for bit at the same size and wrapping on CPU, 1e-9 otherwise)."""
    done = set()
    for name, load_world, nested in RESUMES:
        run, seen = _saved_ok(answer, name)
        off = _off_reference(run.final, _reference(run.steps + run.more, run.optimizer, run.data_seed))
        if off:
            raise Fail(
                M("changed_after_save", more=run.more, off=off),
                _replay(run),
            )
        load_world = _cap(answer, load_world)
        if (name, load_world, nested) in done:
            continue
        done.add((name, load_world, nested))
        res = _resume(answer, run, seen, load_world, run.more, nested)
        bitwise = not answer.gpu and load_world == run.world and nested == run.nested
        problems = ck.resume_problems(run, res, bitwise)
        if problems:
            raise Fail(problems[0], _replay(run, load_world, nested))


@grader.test(3)
def rank0_only_writes(answer: Answer) -> None:
    """Only rank 0 writes, and only the one file at path."""
    for name in SAVES:
        run, seen = _saved_ok(answer, name)
        problems = ck.write_problems(run, seen["listing"])
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
    for name in SAVES:
        _saved_ok(answer, name)
    for name, world in (("C", 2), ("A", 3)):
        run, seen = _saved_ok(answer, name)
        _resume(answer, run, seen, _cap(answer, world), 0, run.nested)
