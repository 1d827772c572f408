"""Checks of an FSDP checkpoint's save/load pair, used by notebook 05's self-check and its grader.

A check trains the small float64 MLP of :mod:`ch13lib.fsdp_train` under FSDP in a world of rank
threads (:mod:`ch13lib.fsdp_world`), calls the student's ``save_checkpoint`` on every rank, and
then inspects what happened:

- the file: ``torch.load(path)`` gives ``{"model", "optim", "epoch"}``; ``"model"`` has the plain
  model's keys, full shapes and exactly the gathered parameters, and loads into the unwrapped
  model; ``"optim"`` holds Adam's (or AdamW's) full (unsharded) state, equal to that of the same training run
  without FSDP;
- the writes: only rank 0 wrote, one file; rank 0's write is held back until the other ranks
  wait for it (see ``hold_rank0_writes``), so a save without a final barrier returns early on
  every run;
- the resume: a fresh model in a world of another size loads the file, must hold the saved
  parameters, return the epoch, and then train on exactly like the run that never stopped
  (bit for bit at the same world size and wrapping; within 1e-9 relative otherwise, the
  difference rounding makes when the gradient sum is split differently).

Grading splits this in two (docs/design.md, "Judge and subject"): :func:`observe_save` and
:func:`observe_resume` (``SUBJECT_API``) run the student's functions in the subject process and
report raw observations only (the gathered parameters, the file's bytes, the directory listing,
who wrote what, the file's state when each rank returned, each rank's exception or the hang);
the grader (the judge) loads the bytes itself (``weights_only=True``), recomputes the reference
training and decides with the ``*_problems`` functions below.
"""

from __future__ import annotations

import dataclasses
import io
import numbers
import os
import re
import tempfile
import warnings
import zipfile
from collections.abc import Mapping

import torch

from . import fsdp_train as ft
from .cell import text as _text
from .cell import traceback_text
from .fsdp_world import World, WorldError, run_world
from .lang import FRAME

RTOL, ATOL = 1e-9, 1e-12
CKPT_NAME = "ckpt.pt"
FILE_CAP = 40 * 2**20  # bytes of a checkpoint file sent back to the grader (this model's: ~10 KB)
SUBJECT_API = ("observe_save", "observe_resume")


def optimizer_name(kind: str) -> str:
    return "AdamW" if kind == "adamw" else "Adam"


@dataclasses.dataclass
class SaveRun:
    world: int
    steps: int
    more: int
    epoch: int
    optimizer: str
    nested: bool
    data_seed: int | None  # None in a subject: it is handed the run's tensors (ft.Data), not their seed
    path: str
    error: WorldError | None = None
    writes: list = dataclasses.field(default_factory=list)  # (rank, path, phase)
    incomplete: dict = dataclasses.field(default_factory=dict)  # rank -> why, at its return
    saved: dict | None = None  # full parameters at the moment of the save (gathered just before)
    final: dict | None = None  # ... and after `more` further steps (the run never stopped)
    note: str | None = None  # what rank 0's torch.save wrote, when not a full state dict
    returned: dict = dataclasses.field(default_factory=dict)  # rank -> file_state() at its return
    layout: dict | None = None  # layout_of() what rank 0's torch.save wrote

    def describe(self) -> str:
        return (
            f"save at world size {self.world} after {self.steps} step(s) of "
            f"{optimizer_name(self.optimizer)}, epoch={self.epoch}, "
            f"{'one FSDP unit per Linear' if self.nested else 'one FSDP unit'}"
        )


@dataclasses.dataclass
class ResumeRun:
    world: int
    nested: bool
    error: WorldError | None = None
    epochs: list | None = None
    loaded: dict | None = None
    final: dict | None = None

    def describe(self) -> str:
        return f"resume at world size {self.world} ({'one FSDP unit per Linear' if self.nested else 'one FSDP unit'})"


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


def file_state(path: str, world=None) -> dict:
    """What the checkpoint at ``path`` looks like right now (raw, for :func:`incomplete_why`).
    ``world``: the :class:`World` whose unfinished writes count (call under its lock)."""
    state = {
        "exists": os.path.exists(path),
        "is_file": os.path.isfile(path),
        "size": 0,
        "writing": None,
        "zip": False,
        "zip_intact": None,
        "open_for_writing": False,  # read for a file of another format only (a zip is checked whole)
    }
    pending = [w for w in world.writes if not w.done] if world is not None else []
    if pending:
        state["writing"] = (pending[0].rank, os.path.basename(pending[0].path))
    if state["is_file"]:
        state["size"] = os.path.getsize(path)
        if zipfile.is_zipfile(path):
            # torch.save's format is a zip archive: a truncated one has no central directory.
            state["zip"] = True
            try:
                with zipfile.ZipFile(path) as z:
                    state["zip_intact"] = z.testzip() is None
            except (zipfile.BadZipFile, OSError):
                state["zip_intact"] = False
        else:
            state["open_for_writing"] = _open_for_writing(path)
    return state


def _open_for_writing(path: str) -> bool:
    """Whether a file descriptor of this process (the world's ranks are its threads) has ``path``
    open for writing now."""
    try:
        want = os.stat(path)
    except OSError:
        return False
    for fd in os.listdir("/proc/self/fd"):
        try:
            st = os.stat(f"/proc/self/fd/{fd}")
            if (st.st_dev, st.st_ino) != (want.st_dev, want.st_ino):
                continue
            with open(f"/proc/self/fdinfo/{fd}") as f:
                flags = int(next(line for line in f if line.startswith("flags:")).split()[1], 8)
        except (OSError, StopIteration, ValueError):
            continue
        if flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
            return True
    return False


def incomplete_why(state: Mapping | None) -> str | None:
    """Why the checkpoint was not complete when :func:`file_state` looked, or None."""
    if not state:
        return None
    if not state.get("exists"):
        return "the file did not exist yet"
    if state.get("writing"):
        rank, name = state["writing"]
        return f"rank {rank} was still writing {name!r}"
    if state.get("zip"):
        return None if state.get("zip_intact") else "the file was truncated"
    if state.get("open_for_writing"):
        return "the file was still open for writing"
    if state.get("is_file") and state.get("size") == 0:
        return "the file was still empty"
    return None


def run_save(
    save_fn,
    directory: str,
    *,
    world: int = 2,
    steps: int = 3,
    more: int = 2,
    epoch: int = 4,
    optimizer: str = "adam",
    nested: bool = False,
    data_seed: int = 0,
    data: ft.Data | None = None,
    guard_s: float = 60.0,
    backend: str = "gloo",
) -> SaveRun:
    """Train ``steps`` steps at ``world`` ranks, save, then go on ``more`` steps (never stopped);
    from ``data`` (the initial weights and every step's batch) when given, else from the public
    ``data_seed``."""
    path = os.path.join(directory, CKPT_NAME)
    run = SaveRun(world, steps, more, epoch, optimizer, nested, None if data is not None else data_seed, path)
    source = data if data is not None else data_seed

    def rank_fn(w):
        import torch.distributed as dist

        rank, size = dist.get_rank(), dist.get_world_size()
        model = ft.wrap(ft.make_model(data_seed, init=data.init if data is not None else None), nested)
        opt = ft.make_optimizer(model, optimizer)
        ft.train(model, opt, 0, steps, source, rank, size)
        saved = ft.full_params(model)
        w.sync()
        with w.phase("save_checkpoint", on_return=lambda: file_state(path, w)):
            save_fn(model, opt, epoch, path)
        w.sync()
        ft.train(model, opt, steps, more, source, rank, size)
        return saved, ft.full_params(model)

    wld = World(world, hold_rank0_writes=True)
    wld.on_save = layout_of
    ctx = _quiet()
    try:
        results = run_world(world, rank_fn, guard_s=guard_s, world=wld, backend=backend)
        run.saved, run.final = results[0]
    except WorldError as e:
        run.error = e
    finally:
        ctx.__exit__(None, None, None)
    with wld.cond:
        run.writes = [(w.rank, w.path, w.phase) for w in wld.writes if w.phase == "save_checkpoint"]
        run.returned = dict(wld.at_return.get("save_checkpoint", {}))
        run.incomplete = {r: incomplete_why(st) for r, st in run.returned.items()}
        layouts = [w.note for w in wld.writes if w.rank == 0 and w.note]
        run.layout = layouts[-1] if layouts else None
        run.note = layout_text(run.layout)
    return run


def run_resume(
    load_fn,
    path: str,
    *,
    world: int,
    start: int,
    more: int,
    optimizer: str = "adam",
    nested: bool = False,
    data_seed: int = 0,
    data: ft.Data | None = None,
    init_seed: int = 97,
    guard_s: float = 60.0,
    backend: str = "gloo",
) -> ResumeRun:
    """A fresh model (other initial values) and optimizer at ``world`` ranks load ``path``, then
    train ``more`` steps from step ``start`` (on ``data``'s batches when given, else the public
    ``data_seed``'s)."""
    source = data if data is not None else data_seed
    run = ResumeRun(world, nested)

    def rank_fn(w):
        import torch.distributed as dist

        rank, size = dist.get_rank(), dist.get_world_size()
        model = ft.wrap(ft.make_model(init_seed), nested)
        opt = ft.make_optimizer(model, optimizer)
        w.sync()
        with w.phase("load_checkpoint"):
            epoch = load_fn(model, opt, path)
        w.sync()
        loaded = ft.full_params(model)
        ft.train(model, opt, start, more, source, rank, size)
        return epoch, loaded, ft.full_params(model)

    ctx = _quiet()
    try:
        results = run_world(world, rank_fn, guard_s=guard_s, backend=backend)
        run.epochs = [r[0] for r in results]
        run.loaded, run.final = results[0][1], results[0][2]
    except WorldError as e:
        run.error = e
    finally:
        ctx.__exit__(None, None, None)
    return run


# ---- what a check finds wrong, as sentences --------------------------------------------------


def _shape(t) -> str:
    return str(list(t.shape)) if hasattr(t, "shape") else type(t).__name__


def file_observation(path: str, cap: int = FILE_CAP) -> dict:
    """What is at ``path``, as plain data: {"kind": "file"|"dir"|"missing", "size", "bytes"
    (None past ``cap``), "entries" (a directory's names)}."""
    if os.path.isdir(path):
        return {"kind": "dir", "size": 0, "bytes": None, "entries": sorted(os.listdir(path))[:50]}
    if not os.path.exists(path):
        return {"kind": "missing", "size": 0, "bytes": None, "entries": []}
    size = os.path.getsize(path)
    data = None
    if size <= cap:
        with open(path, "rb") as f:
            data = f.read(min(size, cap) + 1)  # a file still growing stays capped
        data = data if len(data) <= cap else None
    return {"kind": "file", "size": size, "bytes": data, "entries": []}


def load_file(path: str, note: str | None = None):
    """``torch.load(path, weights_only=True)`` as the contract says, or a sentence saying why it
    is not possible. ``note``: what the check saw being written (see :func:`layout_note`)."""
    return load_observed(file_observation(path, cap=2**40), note)


def load_observed(seen: Mapping, note: str | None = None):
    """:func:`load_file` on a :func:`file_observation`: the bytes are loaded here, with
    ``torch.load(..., weights_only=True)`` (the grader runs this on what the subject sent)."""
    if seen.get("kind") == "dir":
        return None, (
            "the checkpoint path is a directory, not one file: that is torch.distributed.checkpoint's "
            "sharded format (one file per rank). The contract asks for ONE file, written "
            "by rank 0 with torch.save, that torch.load reads back."
        )
    if seen.get("kind") != "file":
        return None, "save_checkpoint returned on every rank, but no file was written at path"
    data = seen.get("bytes")
    if not isinstance(data, bytes):
        return None, (
            f"the checkpoint file is {seen.get('size', 0) / 2**20:.0f} MiB; this model's full "
            f"checkpoint takes a few KB: save the model's and the optimizer's state dicts "
            f"and the epoch, nothing else"
        )
    try:
        ctx = _quiet()
        try:
            obj = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        finally:
            ctx.__exit__(None, None, None)
    except Exception as e:  # noqa: BLE001
        full = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
        m = re.search(r"Unsupported global: GLOBAL (\S+)", full)
        text = (
            f"the file holds a {m.group(1)}, which torch.load (weights_only=True, its default) refuses"
            if m
            else (full.splitlines() or [""])[0]
        )
        hint = ""
        if any(s in full for s in ("ShardedTensor", "DTensor", "sharded_tensor", "_shard")):
            hint = (
                " It holds sharded tensors (ShardedTensor/DTensor): "
                + (note or "a SHARDED_STATE_DICT or LOCAL_STATE_DICT")
                + ", which only make sense together with the other ranks' shards. Gather a "
                "FULL_STATE_DICT (every rank calls it) and let rank 0 save that."
            )
        return None, f"torch.load(path) failed: {type(e).__name__}: {text}.{hint}"
    return obj, None


def layout_of(obj) -> dict | None:
    """What kind of state dict a saved object's "model" holds when it is not a full one, as plain
    data: {"flat": key} (FSDP's flattened parameter) or {"sharded": key, "type": class name}."""
    sd = obj.get("model") if isinstance(obj, Mapping) else None
    if not isinstance(sd, Mapping):
        return None
    flat = [k for k in sd if "flat_param" in str(k)]
    if flat:
        return {"flat": repr(flat[0])[:200]}
    for k, v in sd.items():
        if isinstance(v, torch.Tensor) and type(v) is not torch.Tensor:
            return {"sharded": repr(k)[:200], "type": str(type(v).__name__)[:100]}
    return None


def layout_text(layout: Mapping | None) -> str | None:
    """:func:`layout_of`'s finding as a sentence."""
    if not isinstance(layout, Mapping):
        return None
    if "flat" in layout:
        return (
            f"'model' holds FSDP's flattened parameter {layout['flat']}, a LOCAL_STATE_DICT (this "
            f"rank's shard of all parameters, concatenated)"
        )
    if "sharded" in layout:
        return (
            f"'model'[{layout['sharded']}] is a {layout.get('type')}, a SHARDED_STATE_DICT (each "
            f"rank's piece of every parameter)"
        )
    return None


def layout_note(obj) -> str | None:
    """What kind of state dict a saved object's "model" holds when it is not a full one."""
    return layout_text(layout_of(obj))


def file_problems(obj, run: SaveRun) -> list[str]:
    """What is wrong with the checkpoint dict's layout, its "model" part and its "epoch"."""
    if not isinstance(obj, Mapping):
        return [f"torch.load(path) gave a {type(obj).__name__}; expected a dict with keys 'model', 'optim' and 'epoch'"]
    missing = [k for k in ("model", "optim", "epoch") if k not in obj]
    if missing:
        return [
            f"the checkpoint dict has keys {sorted(map(str, obj))}; missing {missing} "
            f"(expected 'model', 'optim' and 'epoch')"
        ]
    problems = []
    sd = obj["model"]
    expected = run.saved
    if not isinstance(sd, Mapping):
        return [f"'model' is a {type(sd).__name__}, not a state dict"]
    keys, want = list(sd), list(expected)
    if set(map(str, keys)) != set(want):
        flat = [k for k in keys if "flat_param" in str(k) or "_fsdp_wrapped_module" in str(k)]
        why = (
            " It holds FSDP's flattened parameter(s) " + str(flat[:2]) + ": a LOCAL_STATE_DICT "
            "(or the wrapped module's internals), not the full state dict. Use "
            "StateDictType.FULL_STATE_DICT."
            if flat
            else ""
        )
        problems.append(
            f"'model' has keys {sorted(map(str, keys))}, but the plain model's state_dict has {sorted(want)}.{why}"
        )
        return problems
    for name in want:
        v = sd[name]
        if not isinstance(v, torch.Tensor) or type(v) is not torch.Tensor:
            problems.append(
                f"'model'['{name}'] is a {type(v).__name__}, not a plain tensor: a "
                f"sharded state dict (SHARDED_STATE_DICT) holds only this rank's shard. "
                f"Save the FULL_STATE_DICT."
            )
            continue
        if tuple(v.shape) != tuple(expected[name].shape):
            problems.append(
                f"'model'['{name}'] has shape {_shape(v)} but the parameter has "
                f"{_shape(expected[name])}: a shard or a flattened view, not the full "
                f"parameter"
            )
            continue
        if not torch.equal(v.detach().cpu().to(expected[name].dtype), expected[name]):
            d = (v.detach().cpu().double() - expected[name].double()).abs().max().item()
            problems.append(
                f"'model'['{name}'] differs from the model's gathered parameter "
                f"(max |diff| {d:.3g}): the file must hold the values at the moment of "
                f"the save, from every rank's shard"
            )
    if not problems:
        plain = ft.make_model(123)
        try:
            plain.load_state_dict(sd, strict=True)
        except Exception as e:  # noqa: BLE001
            problems.append(
                f"'model' does not load into the plain, unwrapped model: "
                f"load_state_dict(strict=True) raised {type(e).__name__}: {e}"
            )
    ep = obj["epoch"]
    if isinstance(ep, torch.Tensor) and ep.numel() == 1:
        ep = ep.item()
    if isinstance(ep, bool) or not isinstance(ep, int) or ep != run.epoch:
        problems.append(
            f"'epoch' is {obj['epoch']!r}; save_checkpoint was called with epoch={run.epoch} and must store it as given"
        )
    return problems


def optim_problems(obj, run: SaveRun) -> list[str]:
    """What is wrong with the "optim" part: it must be the FULL optimizer state."""
    osd = obj.get("optim") if isinstance(obj, Mapping) else None
    plain, popt = ft.plain_run(run.steps, seed=run.data_seed, kind=run.optimizer, data_seed=run.data_seed)
    names = [n for n, _ in plain.named_parameters()]
    params = dict(plain.named_parameters())
    opt_name = optimizer_name(run.optimizer)
    fix = (
        "Save FSDP.optim_state_dict(model, optimizer) (under FULL_STATE_DICT) or "
        "get_state_dict(..., options=StateDictOptions(full_state_dict=True)), called on every rank."
    )
    if not isinstance(osd, Mapping) or not isinstance(osd.get("state"), Mapping) or not osd.get("state"):
        return [
            f"'optim' is {_summary(osd)}: it holds no optimizer state, so a resumed {opt_name} would "
            f"restart with empty moments and step 0. " + fix
        ]
    state = osd["state"]
    by_name = {}
    for k, v in state.items():
        if isinstance(k, str) and k in params:
            by_name[k] = v
        elif isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(names):
            by_name[names[k]] = v
    if set(by_name) != set(names):
        shapes = {
            str(k): {kk: _shape(vv) for kk, vv in v.items()} if isinstance(v, Mapping) else None
            for k, v in list(state.items())[:2]
        }
        return [
            f"'optim'['state'] has entries for {sorted(map(str, state))}, not one per parameter "
            f"of the model ({names}); e.g. {shapes}. This is the raw optimizer.state_dict() of "
            f"one rank: the state of its shard of FSDP's flattened parameter, useless at any "
            f"other rank or world size. " + fix
        ]
    problems = []
    for name in names:
        entry, ref = by_name[name], popt.state[params[name]]
        if not isinstance(entry, Mapping):
            problems.append(f"'optim' state of '{name}' is a {type(entry).__name__}, not a dict")
            continue
        for key in ("exp_avg", "exp_avg_sq"):
            got = entry.get(key)
            if not isinstance(got, torch.Tensor) or type(got) is not torch.Tensor:
                problems.append(
                    f"'optim' state of '{name}' has {key} = {type(got).__name__}, not a full tensor. " + fix
                )
                break
            if tuple(got.shape) != tuple(params[name].shape):
                problems.append(
                    f"'optim' state of '{name}': {key} has shape {_shape(got)} but the "
                    f"parameter has {_shape(params[name])}: a shard or flattened view, "
                    f"not the full state. " + fix
                )
                break
            want = ref[key]
            if not torch.allclose(got.detach().cpu().double(), want, rtol=RTOL, atol=ATOL):
                d = (got.detach().cpu().double() - want).abs().max().item()
                problems.append(
                    f"'optim' state of '{name}': {key} differs from {opt_name}'s state after "
                    f"{run.steps} step(s) of the same training (max |diff| {d:.3g})"
                )
                break
        step = entry.get("step")
        step = step.item() if isinstance(step, torch.Tensor) and step.numel() == 1 else step
        if step != run.steps:
            problems.append(f"'optim' state of '{name}' has step {step!r}; the optimizer had taken {run.steps} step(s)")
        if problems:
            break
    return problems


def _summary(x) -> str:
    if x is None:
        return "missing"
    if isinstance(x, Mapping):
        return (
            f"a dict with keys {sorted(map(str, x))[:6]} and an empty 'state'"
            if "state" in x
            else f"a dict with keys {sorted(map(str, x))[:6]}"
        )
    return f"a {type(x).__name__}"


def listing(directory: str) -> dict[str, str]:
    """name -> "dir" or "file", for what is in ``directory``."""
    return {
        n: "dir" if os.path.isdir(os.path.join(directory, n)) else "file" for n in sorted(os.listdir(directory))[:200]
    }


def write_problems(run: SaveRun, entries: Mapping[str, str]) -> list[str]:
    """``entries``: :func:`listing` of the directory the save was given, after the save."""
    problems = []
    here = os.path.dirname(os.path.abspath(run.path))
    others = sorted(  # a thread no rank started counts where it writes beside the checkpoint
        (r, p) for r, p, _ in run.writes if r > 0 or (r < 0 and os.path.dirname(os.path.abspath(p)) == here)
    )
    if others:
        r, p = others[0]
        who = f"rank {r}" if r > 0 else "a thread that no rank started (its own _thread or the like)"
        problems.append(
            f"{who} wrote {os.path.basename(p)!r} during "
            f"save_checkpoint: only rank 0 may write (every rank holds the same full "
            f"state, so other ranks' writes race on the same file or litter the disk). "
            f"Guard the write with `if dist.get_rank() == 0:`."
        )
    name = os.path.basename(run.path)
    extra = sorted(set(entries) - {name})
    if extra and entries.get(name) != "dir":
        problems.append(f"save_checkpoint left {extra} beside the checkpoint: it must write ONE file, at path")
    return problems


def complete_problems(run: SaveRun) -> list[str]:
    for rank in sorted(run.incomplete):
        why = run.incomplete[rank]
        if why:
            return [
                f"save_checkpoint returned on rank {rank} while the checkpoint was not complete "
                f"({why}). The check held rank 0's write back until the other ranks were "
                f"either waiting for rank 0 or had returned, so this happens on every run: end "
                f"save_checkpoint with a collective every rank calls AFTER rank 0's write, such "
                f"as dist.barrier()."
            ]
    return []


def resume_problems(save: SaveRun, res: ResumeRun, bitwise: bool) -> list[str]:
    where = f"({save.describe()}; {res.describe()})"
    bad = [(r, e) for r, e in enumerate(res.epochs) if not epoch_matches(e, save.epoch)]
    if bad:
        r, e = bad[0]
        return [f"load_checkpoint returned {e!r} on rank {r}; the checkpoint was saved with epoch={save.epoch} {where}"]
    for name, want in save.saved.items():
        got = res.loaded.get(name)
        if got is None or not torch.equal(got, want):
            d = "missing" if got is None else f"max |diff| {(got - want).abs().max().item():.3g}"
            return [
                f"after load_checkpoint, parameter '{name}' is not the saved one ({d}) {where}: "
                f"every rank must load the model (each keeps its own shard)"
            ]
    for name, want in save.final.items():
        got = res.final[name]
        same = torch.equal(got, want) if bitwise else torch.allclose(got, want, rtol=RTOL, atol=ATOL)
        if not same:
            d = (got - want).abs().max().item()
            return [
                f"after load_checkpoint the parameters were right, but {save.more} more "
                f"training step(s) differ from the run that never stopped ('{name}': max "
                f"|diff| {d:.3g}, {'bit for bit expected' if bitwise else f'tolerance {RTOL:g}'}) "
                f"{where}: the optimizer state ({optimizer_name(save.optimizer)}'s exp_avg, "
                f"exp_avg_sq and step) was not restored on every rank"
            ]
    return []


def epoch_matches(got, want: int) -> bool:
    """load_checkpoint's return value is the saved epoch (an int, or a one-element tensor)."""
    if isinstance(got, bool):
        return False
    if isinstance(got, torch.Tensor):
        return got.numel() == 1 and not got.dtype.is_complex and got.item() == want
    return isinstance(got, numbers.Real) and got == want


def hint(exc: BaseException | str | None) -> str:
    """A known cause for an exception raised inside torch, or ''."""
    text = str(exc or "")
    if "setStorage" in text and "storage of size 0" in text:
        return (
            "\nKnown FSDP limitation on CPU: FullStateDictConfig / FullOptimStateDictConfig "
            "with offload_to_cpu=True fails when the parameters already live on the CPU (as "
            "under gloo here). Use offload_to_cpu=False; on GPUs offload_to_cpu=True is the "
            "usual choice and works."
        )
    if "FSDP needs a non-CPU accelerator" in text:
        return "\nFSDP on CPU needs device_id=torch.device('cpu')."
    return ""


# ---- the subject's side of grading: run the cell's functions, report what happened ------------
# The grader (the judge) never runs the student's code: it asks the subject process for these
# observations (plain data: tensors, bytes, strings) and decides with the functions above.


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


# ---- the notebook's self-check ---------------------------------------------------------------


def self_check(
    save_checkpoint,
    load_checkpoint,
    *,
    save_world: int = 2,
    load_world: int = 1,
    steps: int = 3,
    more: int = 2,
    epoch: int = 4,
    optimizer: str = "adam",
    nested: bool = False,
) -> bool:
    """Save at ``save_world`` ranks, inspect the file, resume at ``load_world`` ranks; print ✔/✘."""
    from . import grading

    if grading():
        print("fsdp_checkpoint: " + FRAME("skipped"))
        return True
    ok = True

    def report(good: bool, what: str, problems=()):
        nonlocal ok
        ok &= good
        print(("✔ " if good else "✘ ") + what + ("" if good else "\n    " + "\n    ".join(problems)))

    with tempfile.TemporaryDirectory() as d:
        run = run_save(
            save_checkpoint,
            d,
            world=save_world,
            steps=steps,
            more=more,
            epoch=epoch,
            optimizer=optimizer,
            nested=nested,
            guard_s=30,
        )
        print(f"[{run.describe()}]")
        if run.error is not None:
            if isinstance(getattr(run.error, "exc", None), NotImplementedError):
                print(FRAME("stub_named", what="save_checkpoint"))
                return False
            report(
                False, "save_checkpoint ran on every rank", [run.error.message + hint(getattr(run.error, "exc", None))]
            )
            return False
        report(True, "save_checkpoint ran on every rank without a hang")
        p = write_problems(run, listing(d))
        report(not p, "only rank 0 wrote, one file", p)
        p = complete_problems(run)
        report(not p, "the file was complete when save_checkpoint returned on every rank", p)
        obj, why = load_file(run.path, run.note)
        if why:
            report(False, "torch.load(path) reads the checkpoint", [why])
            return False
        p = file_problems(obj, run)
        report(
            not p,
            "'model' is the full state dict (keys, shapes, values), loads into the plain model; 'epoch' as given",
            p,
        )
        p = optim_problems(obj, run)
        report(not p, f"'optim' is the full optimizer state (equal to {optimizer_name(optimizer)}'s without FSDP)", p)
        res = run_resume(
            load_checkpoint,
            run.path,
            world=load_world,
            start=steps,
            more=more,
            optimizer=optimizer,
            nested=nested,
            guard_s=30,
        )
        if res.error is not None:
            if isinstance(getattr(res.error, "exc", None), NotImplementedError):
                print(FRAME("stub_named", what="load_checkpoint"))
                return False
            report(
                False,
                f"load_checkpoint ran at world size {load_world}",
                [res.error.message + hint(getattr(res.error, "exc", None))],
            )
            return False
        p = resume_problems(run, res, bitwise=(load_world == save_world))
        report(
            not p,
            f"resumed at world size {load_world}: epoch, parameters, and {more} more "
            f"steps equal to the run that never stopped",
            p,
        )
    return ok
