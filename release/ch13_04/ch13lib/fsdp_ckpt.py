"""Checks of an FSDP checkpoint's save/load pair, used by notebook 05's self-check and its grader.

A check trains the small float64 MLP of :mod:`ch13lib.fsdp_train` under FSDP in a world of rank
threads (:mod:`ch13lib.fsdp_world`), calls the student's ``save_checkpoint`` on every rank, and
then inspects what happened:

- the file: ``torch.load(path)`` gives ``{"model", "optim", "epoch"}``; ``"model"`` has the plain
  model's keys, full shapes and exactly the gathered parameters, and loads into the unwrapped
  model; ``"optim"`` holds Adam's full (unsharded) state, equal to that of the same training run
  without FSDP;
- the writes: only rank 0 wrote, one file; rank 0's write is held back until the other ranks
  wait for it (see ``hold_rank0_writes``), so a save without a final barrier returns early on
  every run;
- the resume: a fresh model in a world of another size loads the file, must hold the saved
  parameters, return the epoch, and then train on exactly like the run that never stopped
  (bit for bit at the same world size and wrapping; within 1e-9 relative otherwise, the
  difference rounding makes when the gradient sum is split differently).
"""
from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import warnings
import zipfile
from collections.abc import Mapping

import torch

from . import fsdp_train as ft
from .fsdp_world import World, WorldError, run_world

RTOL, ATOL = 1e-9, 1e-12


@dataclasses.dataclass
class SaveRun:
    world: int
    steps: int
    more: int
    epoch: int
    optimizer: str
    nested: bool
    data_seed: int
    path: str
    error: WorldError | None = None
    writes: list = dataclasses.field(default_factory=list)        # (rank, path, phase)
    incomplete: dict = dataclasses.field(default_factory=dict)    # rank -> why, at its return
    saved: dict | None = None      # full parameters right after the save
    final: dict | None = None      # ... and after `more` further steps (the run never stopped)
    note: str | None = None        # what rank 0's torch.save wrote, when not a full state dict

    def describe(self) -> str:
        return (f"save at world size {self.world} after {self.steps} step(s) of "
                f"{'AdamW' if self.optimizer == 'adamw' else 'Adam'}, epoch={self.epoch}, "
                f"{'one FSDP unit per Linear' if self.nested else 'one FSDP unit'}")


@dataclasses.dataclass
class ResumeRun:
    world: int
    nested: bool
    error: WorldError | None = None
    epochs: list | None = None
    loaded: dict | None = None
    final: dict | None = None

    def describe(self) -> str:
        return (f"resume at world size {self.world} "
                f"({'one FSDP unit per Linear' if self.nested else 'one FSDP unit'})")


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


def _complete(path: str, world) -> str | None:
    """Why the checkpoint is not complete at this moment, or None (runs under the world's lock)."""
    if not os.path.exists(path):
        return "the file did not exist yet"
    pending = [w for w in world.writes if not w.done]
    if pending:
        return f"rank {pending[0].rank} was still writing {os.path.basename(pending[0].path)!r}"
    if os.path.isfile(path) and zipfile.is_zipfile(path):
        # torch.save's format is a zip archive: a truncated one has no central directory.
        try:
            with zipfile.ZipFile(path) as z:
                if z.testzip() is not None:
                    return "the file was truncated"
        except (zipfile.BadZipFile, OSError):
            return "the file was truncated"
    elif os.path.isfile(path) and os.path.getsize(path) == 0:
        return "the file was still empty"
    return None


def run_save(save_fn, directory: str, *, world: int = 2, steps: int = 3, more: int = 2,
             epoch: int = 4, optimizer: str = "adam", nested: bool = False, data_seed: int = 0,
             guard_s: float = 60.0, backend: str = "gloo") -> SaveRun:
    """Train ``steps`` steps at ``world`` ranks, save, then go on ``more`` steps (never stopped)."""
    path = os.path.join(directory, "ckpt.pt")
    run = SaveRun(world, steps, more, epoch, optimizer, nested, data_seed, path)

    def rank_fn(w):
        import torch.distributed as dist
        rank, size = dist.get_rank(), dist.get_world_size()
        model = ft.wrap(ft.make_model(data_seed), nested)
        opt = ft.make_optimizer(model, optimizer)
        ft.train(model, opt, 0, steps, data_seed, rank, size)
        w.sync()
        with w.phase("save_checkpoint", on_return=lambda: _complete(path, w)):
            save_fn(model, opt, epoch, path)
        w.sync()
        saved = ft.full_params(model)
        ft.train(model, opt, steps, more, data_seed, rank, size)
        return saved, ft.full_params(model)

    wld = World(world, hold_rank0_writes=True)
    wld.on_save = layout_note
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
        run.incomplete = dict(wld.at_return.get("save_checkpoint", {}))
        notes = [w.note for w in wld.writes if w.rank == 0 and w.note]
        run.note = notes[-1] if notes else None
    return run


def run_resume(load_fn, path: str, *, world: int, start: int, more: int, optimizer: str = "adam",
               nested: bool = False, data_seed: int = 0, init_seed: int = 97,
               guard_s: float = 60.0, backend: str = "gloo") -> ResumeRun:
    """A fresh model (other initial values) and optimizer at ``world`` ranks load ``path``, then
    train ``more`` steps from step ``start``."""
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
        ft.train(model, opt, start, more, data_seed, rank, size)
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


def load_file(path: str, note: str | None = None):
    """``torch.load(path)`` as the contract says, or a sentence saying why it is not possible.
    ``note``: what the check saw being written (see :func:`layout_note`)."""
    if os.path.isdir(path):
        return None, (f"the checkpoint path is a directory, not one file: that is torch.distributed.checkpoint's "
                      f"sharded format (one file per rank). The contract asks for ONE file, written "
                      f"by rank 0 with torch.save, that torch.load reads back.")
    if not os.path.exists(path):
        return None, "save_checkpoint returned on every rank, but no file was written at path"
    try:
        ctx = _quiet()
        try:
            obj = torch.load(path, map_location="cpu")
        finally:
            ctx.__exit__(None, None, None)
    except Exception as e:      # noqa: BLE001
        full = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
        m = re.search(r"Unsupported global: GLOBAL (\S+)", full)
        text = (f"the file holds a {m.group(1)}, which torch.load (weights_only=True, its "
                f"default) refuses" if m else (full.splitlines() or [""])[0])
        hint = ""
        if any(s in full for s in ("ShardedTensor", "DTensor", "sharded_tensor", "_shard")):
            hint = (" It holds sharded tensors (ShardedTensor/DTensor): " +
                    (note or "a SHARDED_STATE_DICT or LOCAL_STATE_DICT") +
                    ", which only make sense together with the other ranks' shards. Gather a "
                    "FULL_STATE_DICT (every rank calls it) and let rank 0 save that.")
        return None, f"torch.load(path) failed: {type(e).__name__}: {text}.{hint}"
    return obj, None


def layout_note(obj) -> str | None:
    """What kind of state dict a saved object's "model" holds when it is not a full one."""
    sd = obj.get("model") if isinstance(obj, Mapping) else None
    if not isinstance(sd, Mapping):
        return None
    flat = [k for k in sd if "flat_param" in str(k)]
    if flat:
        return (f"'model' holds FSDP's flattened parameter {flat[0]!r}, a LOCAL_STATE_DICT (this "
                f"rank's shard of all parameters, concatenated)")
    for k, v in sd.items():
        if isinstance(v, torch.Tensor) and type(v) is not torch.Tensor:
            return (f"'model'[{k!r}] is a {type(v).__name__}, a SHARDED_STATE_DICT (each rank's "
                    f"piece of every parameter)")
    return None


def file_problems(obj, run: SaveRun) -> list[str]:
    """What is wrong with the checkpoint dict's layout, its "model" part and its "epoch"."""
    if not isinstance(obj, Mapping):
        return [f"torch.load(path) gave a {type(obj).__name__}; expected a dict with keys "
                f"'model', 'optim' and 'epoch'"]
    missing = [k for k in ("model", "optim", "epoch") if k not in obj]
    if missing:
        return [f"the checkpoint dict has keys {sorted(map(str, obj))}; missing {missing} "
                f"(expected 'model', 'optim' and 'epoch')"]
    problems = []
    sd = obj["model"]
    expected = run.saved
    if not isinstance(sd, Mapping):
        return [f"'model' is a {type(sd).__name__}, not a state dict"]
    keys, want = list(sd), list(expected)
    if set(map(str, keys)) != set(want):
        flat = [k for k in keys if "flat_param" in str(k) or "_fsdp_wrapped_module" in str(k)]
        why = (" It holds FSDP's flattened parameter(s) " + str(flat[:2]) + ": a LOCAL_STATE_DICT "
               "(or the wrapped module's internals), not the full state dict. Use "
               "StateDictType.FULL_STATE_DICT." if flat else "")
        problems.append(f"'model' has keys {sorted(map(str, keys))}, but the plain model's "
                        f"state_dict has {sorted(want)}.{why}")
        return problems
    for name in want:
        v = sd[name]
        if not isinstance(v, torch.Tensor) or type(v) is not torch.Tensor:
            problems.append(f"'model'['{name}'] is a {type(v).__name__}, not a plain tensor: a "
                            f"sharded state dict (SHARDED_STATE_DICT) holds only this rank's shard. "
                            f"Save the FULL_STATE_DICT.")
            continue
        if tuple(v.shape) != tuple(expected[name].shape):
            problems.append(f"'model'['{name}'] has shape {_shape(v)} but the parameter has "
                            f"{_shape(expected[name])}: a shard or a flattened view, not the full "
                            f"parameter")
            continue
        if not torch.equal(v.detach().cpu().to(expected[name].dtype), expected[name]):
            d = (v.detach().cpu().double() - expected[name].double()).abs().max().item()
            problems.append(f"'model'['{name}'] differs from the model's gathered parameter "
                            f"(max |diff| {d:.3g}): the file must hold the values at the moment of "
                            f"the save, from every rank's shard")
    if not problems:
        plain = ft.make_model(123)
        try:
            plain.load_state_dict(sd, strict=True)
        except Exception as e:      # noqa: BLE001
            problems.append(f"'model' does not load into the plain, unwrapped model: "
                            f"load_state_dict(strict=True) raised {type(e).__name__}: {e}")
    ep = obj["epoch"]
    if isinstance(ep, torch.Tensor) and ep.numel() == 1:
        ep = ep.item()
    if isinstance(ep, bool) or not isinstance(ep, int) or ep != run.epoch:
        problems.append(f"'epoch' is {obj['epoch']!r}; save_checkpoint was called with "
                        f"epoch={run.epoch} and must store it as given")
    return problems


def optim_problems(obj, run: SaveRun) -> list[str]:
    """What is wrong with the "optim" part: it must be the FULL optimizer state."""
    osd = obj.get("optim") if isinstance(obj, Mapping) else None
    plain, popt = ft.plain_run(run.steps, seed=run.data_seed, kind=run.optimizer,
                               data_seed=run.data_seed)
    names = [n for n, _ in plain.named_parameters()]
    params = dict(plain.named_parameters())
    fix = ("Save FSDP.optim_state_dict(model, optimizer) (under FULL_STATE_DICT) or "
           "get_state_dict(..., options=StateDictOptions(full_state_dict=True)), called on every rank.")
    if not isinstance(osd, Mapping) or not isinstance(osd.get("state"), Mapping) or not osd.get("state"):
        return [f"'optim' is {_summary(osd)}: it holds no optimizer state, so a resumed Adam would "
                f"restart with empty moments and step 0. " + fix]
    state = osd["state"]
    by_name = {}
    for k, v in state.items():
        if isinstance(k, str) and k in params:
            by_name[k] = v
        elif isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(names):
            by_name[names[k]] = v
    if set(by_name) != set(names):
        shapes = {str(k): {kk: _shape(vv) for kk, vv in v.items()} if isinstance(v, Mapping) else None
                  for k, v in list(state.items())[:2]}
        return [f"'optim'['state'] has entries for {sorted(map(str, state))}, not one per parameter "
                f"of the model ({names}); e.g. {shapes}. This is the raw optimizer.state_dict() of "
                f"one rank: the state of its shard of FSDP's flattened parameter, useless at any "
                f"other rank or world size. " + fix]
    problems = []
    for name in names:
        entry, ref = by_name[name], popt.state[params[name]]
        if not isinstance(entry, Mapping):
            problems.append(f"'optim' state of '{name}' is a {type(entry).__name__}, not a dict")
            continue
        for key in ("exp_avg", "exp_avg_sq"):
            got = entry.get(key)
            if not isinstance(got, torch.Tensor) or type(got) is not torch.Tensor:
                problems.append(f"'optim' state of '{name}' has {key} = {type(got).__name__}, "
                                f"not a full tensor. " + fix)
                break
            if tuple(got.shape) != tuple(params[name].shape):
                problems.append(f"'optim' state of '{name}': {key} has shape {_shape(got)} but the "
                                f"parameter has {_shape(params[name])}: a shard or flattened view, "
                                f"not the full state. " + fix)
                break
            want = ref[key]
            if not torch.allclose(got.detach().cpu().double(), want, rtol=RTOL, atol=ATOL):
                d = (got.detach().cpu().double() - want).abs().max().item()
                problems.append(f"'optim' state of '{name}': {key} differs from Adam's state after "
                                f"{run.steps} step(s) of the same training (max |diff| {d:.3g})")
                break
        step = entry.get("step")
        step = step.item() if isinstance(step, torch.Tensor) and step.numel() == 1 else step
        if step != run.steps:
            problems.append(f"'optim' state of '{name}' has step {step!r}; the optimizer had taken "
                            f"{run.steps} step(s)")
        if problems:
            break
    return problems


def _summary(x) -> str:
    if x is None:
        return "missing"
    if isinstance(x, Mapping):
        return f"a dict with keys {sorted(map(str, x))[:6]} and an empty 'state'" if "state" in x \
            else f"a dict with keys {sorted(map(str, x))[:6]}"
    return f"a {type(x).__name__}"


def write_problems(run: SaveRun, directory: str) -> list[str]:
    problems = []
    others = sorted((r, p) for r, p, _ in run.writes if r != 0)
    if others:
        r, p = others[0]
        problems.append(f"rank {r} wrote {os.path.basename(p)!r} with torch.save during "
                        f"save_checkpoint: only rank 0 may write (every rank holds the same full "
                        f"state, so other ranks' writes race on the same file or litter the disk). "
                        f"Guard the write with `if dist.get_rank() == 0:`.")
    extra = sorted(set(os.listdir(directory)) - {os.path.basename(run.path)})
    if extra and not os.path.isdir(run.path):
        problems.append(f"save_checkpoint left {extra} beside the checkpoint: it must write ONE "
                        f"file, at path")
    return problems


def complete_problems(run: SaveRun) -> list[str]:
    for rank in sorted(run.incomplete):
        why = run.incomplete[rank]
        if why:
            return [f"save_checkpoint returned on rank {rank} while the checkpoint was not complete "
                    f"({why}). The check held rank 0's write back until the other ranks were "
                    f"either waiting for rank 0 or had returned, so this happens on every run: end "
                    f"save_checkpoint with a collective every rank calls AFTER rank 0's write, such "
                    f"as dist.barrier()."]
    return []


def resume_problems(save: SaveRun, res: ResumeRun, bitwise: bool) -> list[str]:
    where = f"({save.describe()}; {res.describe()})"
    bad = [(r, e) for r, e in enumerate(res.epochs) if e != save.epoch or isinstance(e, bool)]
    if bad:
        r, e = bad[0]
        return [f"load_checkpoint returned {e!r} on rank {r}; the checkpoint was saved with "
                f"epoch={save.epoch} {where}"]
    for name, want in save.saved.items():
        got = res.loaded.get(name)
        if got is None or not torch.equal(got, want):
            d = "missing" if got is None else f"max |diff| {(got - want).abs().max().item():.3g}"
            return [f"after load_checkpoint, parameter '{name}' is not the saved one ({d}) {where}: "
                    f"every rank must load the model (each keeps its own shard)"]
    for name, want in save.final.items():
        got = res.final[name]
        same = torch.equal(got, want) if bitwise else torch.allclose(got, want, rtol=RTOL, atol=ATOL)
        if not same:
            d = (got - want).abs().max().item()
            return [f"after load_checkpoint the parameters were right, but {save.more} more "
                    f"training step(s) differ from the run that never stopped ('{name}': max "
                    f"|diff| {d:.3g}, {'bit for bit expected' if bitwise else f'tolerance {RTOL:g}'}) "
                    f"{where}: the optimizer state (Adam's exp_avg, exp_avg_sq and step) was not "
                    f"restored on every rank"]
    return []


def hint(exc: BaseException | None) -> str:
    """A known cause for an exception raised inside torch, or ''."""
    text = str(exc or "")
    if "setStorage" in text and "storage of size 0" in text:
        return ("\nKnown FSDP limitation on CPU: FullStateDictConfig / FullOptimStateDictConfig "
                "with offload_to_cpu=True fails when the parameters already live on the CPU (as "
                "under gloo here). Use offload_to_cpu=False; on GPUs offload_to_cpu=True is the "
                "usual choice and works.")
    if "FSDP needs a non-CPU accelerator" in text:
        return "\nFSDP on CPU needs device_id=torch.device('cpu')."
    return ""


# ---- the notebook's self-check ---------------------------------------------------------------

def self_check(save_checkpoint, load_checkpoint, *, save_world: int = 2, load_world: int = 1,
               steps: int = 3, more: int = 2, epoch: int = 4, optimizer: str = "adam",
               nested: bool = False) -> bool:
    """Save at ``save_world`` ranks, inspect the file, resume at ``load_world`` ranks; print ✔/✘."""
    from . import grading
    if grading():
        print("fsdp_checkpoint self-check skipped while grading: the hidden tests decide.")
        return True
    ok = True

    def report(good: bool, what: str, problems=()):
        nonlocal ok
        ok &= good
        print(("✔ " if good else "✘ ") + what + ("" if good else "\n    " + "\n    ".join(problems)))

    with tempfile.TemporaryDirectory() as d:
        run = run_save(save_checkpoint, d, world=save_world, steps=steps, more=more, epoch=epoch,
                       optimizer=optimizer, nested=nested, guard_s=30)
        print(f"[{run.describe()}]")
        if run.error is not None:
            if isinstance(getattr(run.error, "exc", None), NotImplementedError):
                print("✘ save_checkpoint: not implemented yet")
                return False
            report(False, "save_checkpoint ran on every rank",
                   [run.error.message + hint(getattr(run.error, "exc", None))])
            return False
        report(True, "save_checkpoint ran on every rank without a hang")
        p = write_problems(run, d)
        report(not p, "only rank 0 wrote, one file", p)
        p = complete_problems(run)
        report(not p, "the file was complete when save_checkpoint returned on every rank", p)
        obj, why = load_file(run.path, run.note)
        if why:
            report(False, "torch.load(path) reads the checkpoint", [why])
            return False
        p = file_problems(obj, run)
        report(not p, "'model' is the full state dict (keys, shapes, values), loads into the plain "
                      "model; 'epoch' as given", p)
        p = optim_problems(obj, run)
        report(not p, "'optim' is the full optimizer state (equal to Adam's without FSDP)", p)
        res = run_resume(load_checkpoint, run.path, world=load_world, start=steps, more=more,
                         optimizer=optimizer, nested=nested, guard_s=30)
        if res.error is not None:
            if isinstance(getattr(res.error, "exc", None), NotImplementedError):
                print("✘ load_checkpoint: not implemented yet")
                return False
            report(False, f"load_checkpoint ran at world size {load_world}",
                   [res.error.message + hint(getattr(res.error, "exc", None))])
            return False
        p = resume_problems(run, res, bitwise=(load_world == save_world))
        report(not p, f"resumed at world size {load_world}: epoch, parameters, and {more} more "
                      f"steps equal to the run that never stopped", p)
    return ok
