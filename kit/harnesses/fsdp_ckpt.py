"""The FSDP checkpoint's grading side (notebook 05): the subject runs the cell's save_checkpoint and
load_checkpoint in simulated worlds and reports raw observations only (the gathered parameters, the
file's bytes, the directory listing, who wrote what, the file's state when each rank returned, each
rank's exception or the hang); the grader (the judge, graders/fsdp_checkpoint.py) loads the bytes
itself (``weights_only=True``), recomputes the reference training and decides with
ch13lib.fsdp_ckpt's ``*_problems`` functions. The worlds, the runs and the file's reading are
ch13lib.fsdp_ckpt's, the same the notebook's self-check runs.
"""

from __future__ import annotations

import os
import tempfile

import torch

from ch13lib import fsdp_train as ft
from ch13lib.cell import text as _text
from ch13lib.cell import traceback_text
from ch13lib.fsdp_ckpt import CKPT_NAME, file_observation, listing, run_resume, run_save
from ch13lib.fsdp_world import WorldError

# What a hidden grader may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("observe_save", "observe_resume")


# The grader (the judge) never runs the student's code: it asks the subject process for these
# observations (plain data: tensors, bytes, strings) and decides with ch13lib.fsdp_ckpt's checks.


def _preload() -> None:
    """Import what FSDP and torch.distributed.checkpoint import lazily, once, outside the rank
    threads (a first import inside a world would run in whichever rank gets there first)."""
    import torch._dynamo  # noqa: F401
    import torch.distributed.checkpoint  # noqa: F401
    import torch.distributed.checkpoint.state_dict  # noqa: F401
    import torch.distributed.fsdp  # noqa: F401


def error_observation(err: WorldError | None, filename: str) -> dict | None:
    """A failed world as plain data: its kind and message (a hang is described by the world),
    the rank, and the rank's exception (type, message, the cell's lines of its traceback)."""
    if err is None:
        return None
    exc = getattr(err, "exc", None)
    out = {"kind": str(err.kind), "message": _text(err.message, 8000), "rank": getattr(err, "rank", None), "exc": None}
    if exc is not None:
        out["exc"] = {
            "type": _text(type(exc).__name__, 100),
            "message": _text(exc),
            "traceback": traceback_text(exc, filename),
        }
    return out


def _params(d: dict | None) -> dict | None:
    return None if d is None else {str(k): v.detach().cpu().clone() for k, v in d.items()}


def _epoch_observation(value):
    """load_checkpoint's return value as plain data: ("value", it) when it is plain, else
    ("repr", its repr)."""
    if value is None or type(value) in (int, float, bool):
        return ("value", value)
    if (
        type(value).__module__ == "numpy"
        and getattr(value, "shape", None) == ()
        and getattr(getattr(value, "dtype", None), "kind", "") in ("b", "i", "u", "f")
    ):
        return ("value", value)  # a numpy scalar (np.int64 ...)
    if type(value) is torch.Tensor and value.numel() <= 16:
        return ("value", value.detach().cpu().clone())
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a __repr__ that raises
        text = f"<a {type(value).__name__}>"
    return ("repr", _text(text, 200))


class Shown:
    """A value the grader saw only as its repr (load_checkpoint returned a non-plain object)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def epoch_from_observation(seen):
    kind, value = seen
    return value if kind == "value" else Shown(str(value))


def _scratch(tag: str) -> str:
    """A fresh directory for one save, in the working directory (the grader's job folder,
    removed when grading ends) when it is writable."""
    here = os.getcwd()
    return tempfile.mkdtemp(prefix=f"fsdp_{tag}_", dir=here if os.access(here, os.W_OK) else None)


_SAVE_KEYS = ("world", "steps", "more", "epoch", "optimizer", "nested")


def observe_save(
    cell,
    *,
    data: dict,
    tag: str = "save",
    directory: str | None = None,
    backend: str = "gloo",
    guard_s: float = 60.0,
    **scenario,
) -> dict:
    """Subject side: train at ``scenario["world"]`` ranks from ``data`` (``ft.Data.to_wire()``: the
    initial weights and the batches of steps 0 .. steps+more-1), run the cell's save_checkpoint on
    every rank, train on. Returns raw observations: the parameters at the moment of the save and
    after the further steps (rank 0, gathered), the file's bytes, the directory's listing, every
    torch.save to a file (rank, path, phase), the file's state when each rank returned, what
    rank 0 wrote (its layout), and the world's error."""
    _preload()
    directory = directory or _scratch(tag)
    os.makedirs(directory, exist_ok=True)
    params = {k: scenario[k] for k in _SAVE_KEYS}
    run = run_save(
        cell.module.save_checkpoint,
        directory,
        data=ft.Data.from_wire(data),
        guard_s=guard_s,
        backend=backend,
        **params,
    )
    return {
        "directory": directory,
        "path": run.path,
        "error": error_observation(run.error, cell.filename),
        "writes": [(int(r), str(p), str(ph)) for r, p, ph in run.writes],
        "returned": {int(r): st for r, st in run.returned.items()},
        "layout": run.layout,
        "saved": _params(run.saved),
        "final": _params(run.final),
        "listing": listing(directory),
        "file": file_observation(run.path),
    }


def observe_resume(
    cell,
    save: dict,
    *,
    world: int,
    more: int,
    nested: bool,
    data: dict,
    file: bytes | None = None,
    backend: str = "gloo",
    guard_s: float = 60.0,
) -> dict:
    """Subject side: a fresh model at ``world`` ranks runs the cell's load_checkpoint on the file
    that :func:`observe_save` wrote for ``save`` (its scenario and directory), then trains ``more``
    steps on ``data``'s batches (``ft.Data.to_wire()``, those steps' only: nothing of the training
    before the save). Returns each rank's return value, the loaded and the final parameters (rank
    0, gathered), and the world's error. ``file``: the checkpoint's bytes, as the save left them,
    written afresh in a directory of their own and loaded from there (the grader sends them to a
    subject that never saved). Without them, a subject started afresh (its /tmp is new) saves
    again first from ``save["data"]``, deterministically: then "phase" says so when that save fails."""
    _preload()
    directory = save["directory"]
    if file is not None:
        directory = _scratch("resume")
        with open(os.path.join(directory, CKPT_NAME), "wb") as f:
            f.write(bytes(file))
    path = os.path.join(directory, CKPT_NAME)
    if not os.path.isdir(directory):
        os.makedirs(directory)
        params = {k: save[k] for k in _SAVE_KEYS}
        again = run_save(
            cell.module.save_checkpoint,
            directory,
            data=ft.Data.from_wire(save["data"]),
            guard_s=guard_s,
            backend=backend,
            **params,
        )
        if again.error is not None:
            return {"phase": "save_checkpoint", "error": error_observation(again.error, cell.filename)}
    res = run_resume(
        cell.module.load_checkpoint,
        path,
        world=world,
        start=save["steps"],
        more=more,
        optimizer=save["optimizer"],
        nested=nested,
        data=ft.Data.from_wire(data),
        backend=backend,
        guard_s=guard_s,
    )
    return {
        "phase": "load_checkpoint",
        "error": error_observation(res.error, cell.filename),
        "epochs": None if res.epochs is None else [_epoch_observation(e) for e in res.epochs],
        "loaded": _params(res.loaded),
        "final": _params(res.final),
    }
