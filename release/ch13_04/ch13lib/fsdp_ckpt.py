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

Grading splits this in two (docs/design.md, "Judge and subject"): the grading process that runs
your cell runs these worlds on it and reports raw observations only (the gathered parameters, the
file's bytes, the directory listing, who wrote what, the file's state when each rank returned, each
rank's exception or the hang); the grader loads the bytes itself (``weights_only=True``),
recomputes the reference training and decides with the ``*_problems`` functions below.
"""

from __future__ import annotations

import dataclasses
import hashlib
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
from .fsdp_world import World, WorldError, run_world
from .lang import FRAME, Both, Messages

RTOL, ATOL = 1e-9, 1e-12
CKPT_NAME = "ckpt.pt"
FILE_CAP = 40 * 2**20  # bytes of a checkpoint file sent back to the grader (this model's: ~10 KB)

# What the checks say, in the course's language (ch13lib/lang.py).
M = Messages(
    describe_save=(
        "在 world size {world} 下, {opt} 训练 {steps} 步后保存, epoch={epoch}, {wrap}",
        "save at world size {world} after {steps} step(s) of {opt}, epoch={epoch}, {wrap}",
    ),
    wrap_nested=("每个 Linear 一个 FSDP 单元", "one FSDP unit per Linear"),
    wrap_one=("一个 FSDP 单元", "one FSDP unit"),
    describe_resume=("在 world size {world} 下恢复 ({wrap})", "resume at world size {world} ({wrap})"),
    not_yet=("文件还不存在", "the file did not exist yet"),
    still_writing=("rank {rank} 仍在写入 {name}", "rank {rank} was still writing {name}"),
    truncated=("文件被截断了", "the file was truncated"),
    rewritten=(
        "文件之后又被改写了: 它当时的内容不是最终的检查点",
        "the file was rewritten after that: what it held then was not the final checkpoint",
    ),
    open_writing=("文件仍处于写打开状态", "the file was still open for writing"),
    empty=("文件仍是空的", "the file was still empty"),
    is_dir=(
        "检查点路径是一个目录, 而不是一个文件: 这是 torch.distributed.checkpoint 的分片格式 (每个 rank 一个文件)。"
        "约定要求的是由 rank 0 用 torch.save 写入、torch.load 能读回的「一个」文件。",
        "the checkpoint path is a directory, not one file: that is torch.distributed.checkpoint's "
        "sharded format (one file per rank). The contract asks for ONE file, written "
        "by rank 0 with torch.save, that torch.load reads back.",
    ),
    no_file=(
        "save_checkpoint 在每个 rank 上都返回了, 但 path 处没有写入任何文件",
        "save_checkpoint returned on every rank, but no file was written at path",
    ),
    too_big=(
        "检查点文件有 {mib} MiB; 这个模型的完整检查点只需几 KB: 只保存模型和优化器的 state dict 以及 epoch, 其他都不要",
        "the checkpoint file is {mib} MiB; this model's full checkpoint takes a few KB: save the model's and the "
        "optimizer's state dicts and the epoch, nothing else",
    ),
    unsupported=(
        "文件中有一个 {cls}, torch.load (weights_only=True, 它的默认值) 拒绝加载它",
        "the file holds a {cls}, which torch.load (weights_only=True, its default) refuses",
    ),
    sharded_hint=(
        "它包含分片张量 (ShardedTensor/DTensor): {note}, 只有和其他 rank 的分片合在一起才有意义。"
        "请收集 FULL_STATE_DICT (每个 rank 都要调用), 再由 rank 0 保存它。",
        " It holds sharded tensors (ShardedTensor/DTensor): {note}, which only make sense together with the other "
        "ranks' shards. Gather a FULL_STATE_DICT (every rank calls it) and let rank 0 save that.",
    ),
    default_note=("SHARDED_STATE_DICT 或 LOCAL_STATE_DICT", "a SHARDED_STATE_DICT or LOCAL_STATE_DICT"),
    load_failed=("torch.load(path) 失败: {type}: {text}。{hint}", "torch.load(path) failed: {type}: {text}.{hint}"),
    layout_flat=(
        "'model' 中是 FSDP 的扁平化参数 {flat}, 即 LOCAL_STATE_DICT (本 rank 对所有参数的分片, 拼接在一起)",
        "'model' holds FSDP's flattened parameter {flat}, a LOCAL_STATE_DICT (this rank's shard of all "
        "parameters, concatenated)",
    ),
    layout_sharded=(
        "'model'[{entry}] 是 {type}, 即 SHARDED_STATE_DICT (每个 rank 持有每个参数的一块)",
        "'model'[{entry}] is a {type}, a SHARDED_STATE_DICT (each rank's piece of every parameter)",
    ),
    not_dict=(
        "torch.load(path) 得到的是 {type}; 应为包含键 'model', 'optim' 和 'epoch' 的字典",
        "torch.load(path) gave a {type}; expected a dict with keys 'model', 'optim' and 'epoch'",
    ),
    missing_keys=(
        "检查点字典的键为 {keys}; 缺少 {missing} (应有 'model', 'optim' 和 'epoch')",
        "the checkpoint dict has keys {keys}; missing {missing} (expected 'model', 'optim' and 'epoch')",
    ),
    model_not_sd=("'model' 是 {type}, 不是 state dict", "'model' is a {type}, not a state dict"),
    model_keys=(
        "'model' 的键为 {keys}, 但普通模型的 state_dict 的键为 {want}。{why}",
        "'model' has keys {keys}, but the plain model's state_dict has {want}.{why}",
    ),
    flat_why=(
        "它包含 FSDP 的扁平化参数 {flat}: 这是 LOCAL_STATE_DICT (或被包装模块的内部结构), 不是完整的 state dict。"
        "请使用 StateDictType.FULL_STATE_DICT。",
        " It holds FSDP's flattened parameter(s) {flat}: a LOCAL_STATE_DICT (or the wrapped module's internals), "
        "not the full state dict. Use StateDictType.FULL_STATE_DICT.",
    ),
    not_plain_tensor=(
        "'model'['{name}'] 是 {type}, 不是普通张量: 分片 state dict (SHARDED_STATE_DICT) 只包含本 rank 的分片。"
        "请保存 FULL_STATE_DICT。",
        "'model'['{name}'] is a {type}, not a plain tensor: a sharded state dict (SHARDED_STATE_DICT) holds only "
        "this rank's shard. Save the FULL_STATE_DICT.",
    ),
    bad_shape=(
        "'model'['{name}'] 的形状是 {shape}, 但参数的形状是 {want}: 这是分片或扁平化视图, 不是完整的参数",
        "'model'['{name}'] has shape {shape} but the parameter has {want}: a shard or a flattened view, not the "
        "full parameter",
    ),
    differs=(
        "'model'['{name}'] 与模型收集到的参数不同 (max |diff| {d}): 文件必须保存保存时刻的值, 来自每个 rank 的分片",
        "'model'['{name}'] differs from the model's gathered parameter (max |diff| {d}): the file must hold the "
        "values at the moment of the save, from every rank's shard",
    ),
    no_load=(
        "'model' 无法加载到未包装的普通模型中: load_state_dict(strict=True) 抛出了 {type}: {error}",
        "'model' does not load into the plain, unwrapped model: load_state_dict(strict=True) raised {type}: {error}",
    ),
    bad_epoch=(
        "'epoch' 是 {got}; 调用 save_checkpoint 时 epoch={epoch}, 必须原样保存",
        "'epoch' is {got}; save_checkpoint was called with epoch={epoch} and must store it as given",
    ),
    optim_fix=(
        "请保存 FSDP.optim_state_dict(model, optimizer) (在 FULL_STATE_DICT 下) 或 "
        "get_state_dict(..., options=StateDictOptions(full_state_dict=True)), 并在每个 rank 上调用。",
        "Save FSDP.optim_state_dict(model, optimizer) (under FULL_STATE_DICT) or "
        "get_state_dict(..., options=StateDictOptions(full_state_dict=True)), called on every rank.",
    ),
    no_optim=(
        "'optim' 是{summary}: 其中没有优化器状态, 因此恢复后的 {opt} 会以空的矩估计和第 0 步重新开始。{fix}",
        "'optim' is {summary}: it holds no optimizer state, so a resumed {opt} would restart with empty moments "
        "and step 0. {fix}",
    ),
    summary_missing=("缺失的", "missing"),
    summary_empty=("一个键为 {keys} 且 'state' 为空的字典", "a dict with keys {keys} and an empty 'state'"),
    summary_keys=("一个键为 {keys} 的字典", "a dict with keys {keys}"),
    summary_type=("一个 {type}", "a {type}"),
    optim_entries=(
        "'optim'['state'] 的条目为 {entries}, 而不是模型的每个参数 ({names}) 各一个; 例如 {shapes}。这是某一个 rank "
        "的原始 optimizer.state_dict(): 它的 FSDP 扁平化参数分片的状态, 换一个 rank 或 world size 就毫无用处。{fix}",
        "'optim'['state'] has entries for {entries}, not one per parameter of the model ({names}); e.g. {shapes}. "
        "This is the raw optimizer.state_dict() of one rank: the state of its shard of FSDP's flattened parameter, "
        "useless at any other rank or world size. {fix}",
    ),
    optim_not_dict=("'{name}' 的 'optim' 状态是 {type}, 不是字典", "'optim' state of '{name}' is a {type}, not a dict"),
    optim_not_tensor=(
        "'{name}' 的 'optim' 状态中 {which} = {type}, 不是完整的张量。{fix}",
        "'optim' state of '{name}' has {which} = {type}, not a full tensor. {fix}",
    ),
    optim_shape=(
        "'{name}' 的 'optim' 状态: {which} 的形状是 {shape}, 但参数的形状是 {want}: 这是分片或扁平化视图, "
        "不是完整的状态。{fix}",
        "'optim' state of '{name}': {which} has shape {shape} but the parameter has {want}: a shard or flattened "
        "view, not the full state. {fix}",
    ),
    optim_differs=(
        "'{name}' 的 'optim' 状态: {which} 与同样训练 {steps} 步后 {opt} 的状态不同 (max |diff| {d})",
        "'optim' state of '{name}': {which} differs from {opt}'s state after {steps} step(s) of the same training "
        "(max |diff| {d})",
    ),
    optim_step=(
        "'{name}' 的 'optim' 状态的 step 是 {step}; 优化器已经走了 {steps} 步",
        "'optim' state of '{name}' has step {step}; the optimizer had taken {steps} step(s)",
    ),
    other_thread=(
        "一个不是由任何 rank 启动的线程 (它自己的 _thread 之类)",
        "a thread that no rank started (its own _thread or the like)",
    ),
    wrote=(
        "{who} 在 save_checkpoint 期间写入了 {file}: 只有 rank 0 可以写 (每个 rank 持有同样的完整状态, "
        "其他 rank 写入会争用同一个文件或在磁盘上留下垃圾)。请用 `if dist.get_rank() == 0:` 保护写操作。",
        "{who} wrote {file} during save_checkpoint: only rank 0 may write (every rank holds the same full state, so "
        "other ranks' writes race on the same file or litter the disk). Guard the write with "
        "`if dist.get_rank() == 0:`.",
    ),
    left_beside=(
        "save_checkpoint 在检查点旁边留下了 {extra}: 它必须只在 path 处写「一个」文件",
        "save_checkpoint left {extra} beside the checkpoint: it must write ONE file, at path",
    ),
    incomplete=(
        "检查点尚未完成时 ({why}), save_checkpoint 就在 rank {rank} 上返回了。检查程序把 rank 0 的写入推迟到其他 "
        "rank 都在等待 rank 0 或已经返回之后, 所以每次运行都会出现这种情况: 请在 rank 0 写入「之后」, 用一个每个 "
        "rank 都调用的集合通信结束 save_checkpoint, 例如 dist.barrier()。",
        "save_checkpoint returned on rank {rank} while the checkpoint was not complete ({why}). The check held rank "
        "0's write back until the other ranks were either waiting for rank 0 or had returned, so this happens on "
        "every run: end save_checkpoint with a collective every rank calls AFTER rank 0's write, such as "
        "dist.barrier().",
    ),
    bad_return=(
        "load_checkpoint 在 rank {rank} 上返回了 {got}; 检查点保存时 epoch={epoch} {where}",
        "load_checkpoint returned {got} on rank {rank}; the checkpoint was saved with epoch={epoch} {where}",
    ),
    param_missing=("缺失", "missing"),
    param_not_saved=(
        "load_checkpoint 之后, 参数 '{name}' 不是保存的那个 ({d}) {where}: 每个 rank 都必须加载模型 "
        "(各自保留自己的分片)",
        "after load_checkpoint, parameter '{name}' is not the saved one ({d}) {where}: every rank must load the "
        "model (each keeps its own shard)",
    ),
    resume_differs=(
        "load_checkpoint 之后参数是对的, 但接下来 {more} 步训练与从未中断的运行不同 ('{name}': max |diff| {d}, "
        "{how}) {where}: 优化器状态 ({opt} 的 exp_avg, exp_avg_sq 和 step) 没有在每个 rank 上恢复",
        "after load_checkpoint the parameters were right, but {more} more training step(s) differ from the run that "
        "never stopped ('{name}': max |diff| {d}, {how}) {where}: the optimizer state ({opt}'s exp_avg, exp_avg_sq "
        "and step) was not restored on every rank",
    ),
    bit_for_bit=("应逐位相同", "bit for bit expected"),
    tolerance=("容差 {tol}", "tolerance {tol}"),
    offload=(
        "CPU 上已知的 FSDP 限制: 当参数已经在 CPU 上时 (如这里的 gloo), 带 offload_to_cpu=True 的 "
        "FullStateDictConfig / FullOptimStateDictConfig 会失败。请使用 offload_to_cpu=False; 在 GPU 上 "
        "offload_to_cpu=True 是常用做法, 可以正常工作。",
        "Known FSDP limitation on CPU: FullStateDictConfig / FullOptimStateDictConfig "
        "with offload_to_cpu=True fails when the parameters already live on the CPU (as "
        "under gloo here). Use offload_to_cpu=False; on GPUs offload_to_cpu=True is the "
        "usual choice and works.",
    ),
    cpu_device=(
        "在 CPU 上使用 FSDP 需要 device_id=torch.device('cpu')。",
        "FSDP on CPU needs device_id=torch.device('cpu').",
    ),
    sc_ran=("save_checkpoint 在每个 rank 上都运行了", "save_checkpoint ran on every rank"),
    sc_no_hang=(
        "save_checkpoint 在每个 rank 上都运行完毕, 没有挂起",
        "save_checkpoint ran on every rank without a hang",
    ),
    sc_rank0=("只有 rank 0 写入, 且只写了一个文件", "only rank 0 wrote, one file"),
    sc_complete=(
        "save_checkpoint 在每个 rank 上返回时, 文件都已完整",
        "the file was complete when save_checkpoint returned on every rank",
    ),
    sc_load=("torch.load(path) 能读出检查点", "torch.load(path) reads the checkpoint"),
    sc_model=(
        "'model' 是完整的 state dict (键, 形状, 值), 能加载到普通模型中; 'epoch' 原样保存",
        "'model' is the full state dict (keys, shapes, values), loads into the plain model; 'epoch' as given",
    ),
    sc_optim=(
        "'optim' 是完整的优化器状态 (与不用 FSDP 时 {opt} 的状态相同)",
        "'optim' is the full optimizer state (equal to {opt}'s without FSDP)",
    ),
    sc_load_ran=("load_checkpoint 在 world size {world} 下运行了", "load_checkpoint ran at world size {world}"),
    sc_resumed=(
        "在 world size {world} 下恢复: epoch, 参数, 以及接下来的 {more} 步都与从未中断的运行相同",
        "resumed at world size {world}: epoch, parameters, and {more} more steps equal to the run that never stopped",
    ),
)


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

    def describe(self) -> Both:
        return M.both(
            "describe_save",
            world=self.world,
            steps=self.steps,
            opt=optimizer_name(self.optimizer),
            epoch=self.epoch,
            wrap=M.both("wrap_nested" if self.nested else "wrap_one"),
        )


@dataclasses.dataclass
class ResumeRun:
    world: int
    nested: bool
    error: WorldError | None = None
    epochs: list | None = None
    loaded: dict | None = None
    final: dict | None = None

    def describe(self) -> Both:
        return M.both("describe_resume", world=self.world, wrap=M.both("wrap_nested" if self.nested else "wrap_one"))


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
        state["sha256"] = file_digest(path)
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


def file_digest(path: str) -> str | None:
    """The SHA-256 of the file's bytes now, or None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


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


def incomplete_why(state: Mapping | None, final: str | None = None) -> Both | None:
    """Why the checkpoint was not complete when :func:`file_state` looked, or None. ``final``: the
    SHA-256 of the file as the save left it; a file whose bytes changed after a rank returned was
    not complete then, whatever its format said (a placeholder that a later write replaces)."""
    if not state:
        return None
    why = _incomplete_format(state)
    if why is None and final is not None and state.get("sha256") not in (None, final):
        return M.both("rewritten")
    return why


def _incomplete_format(state: Mapping) -> Both | None:
    if not state.get("exists"):
        return M.both("not_yet")
    if state.get("writing"):
        rank, name = state["writing"]
        return M.both("still_writing", rank=rank, name=repr(name))
    if state.get("zip"):
        return None if state.get("zip_intact") else M.both("truncated")
    if state.get("open_for_writing"):
        return M.both("open_writing")
    if state.get("is_file") and state.get("size") == 0:
        return M.both("empty")
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
        final = file_digest(run.path) if os.path.isfile(run.path) else None
        run.incomplete = {r: incomplete_why(st, final) for r, st in run.returned.items()}
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
        return None, M("is_dir")
    if seen.get("kind") != "file":
        return None, M("no_file")
    data = seen.get("bytes")
    if not isinstance(data, bytes):
        return None, M("too_big", mib=f"{seen.get('size', 0) / 2**20:.0f}")
    try:
        ctx = _quiet()
        try:
            obj = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        finally:
            ctx.__exit__(None, None, None)
    except Exception as e:  # noqa: BLE001
        full = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
        m = re.search(r"Unsupported global: GLOBAL (\S+)", full)
        text = M.both("unsupported", cls=m.group(1)) if m else (full.splitlines() or [""])[0]
        hint = ""
        if any(s in full for s in ("ShardedTensor", "DTensor", "sharded_tensor", "_shard")):
            hint = M.both("sharded_hint", note=note or M.both("default_note"))
        return None, M("load_failed", type=type(e).__name__, text=text, hint=hint)
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


def layout_text(layout: Mapping | None) -> Both | None:
    """:func:`layout_of`'s finding as a sentence (in both languages: it fills a field of another)."""
    if not isinstance(layout, Mapping):
        return None
    if "flat" in layout:
        return M.both("layout_flat", flat=layout["flat"])
    if "sharded" in layout:
        return M.both("layout_sharded", entry=layout["sharded"], type=layout.get("type"))
    return None


def layout_note(obj) -> Both | None:
    """What kind of state dict a saved object's "model" holds when it is not a full one."""
    return layout_text(layout_of(obj))


def file_problems(obj, run: SaveRun) -> list[str]:
    """What is wrong with the checkpoint dict's layout, its "model" part and its "epoch"."""
    if not isinstance(obj, Mapping):
        return [M("not_dict", type=type(obj).__name__)]
    missing = [k for k in ("model", "optim", "epoch") if k not in obj]
    if missing:
        return [M("missing_keys", keys=sorted(map(str, obj)), missing=missing)]
    problems = []
    sd = obj["model"]
    expected = run.saved
    if not isinstance(sd, Mapping):
        return [M("model_not_sd", type=type(sd).__name__)]
    keys, want = list(sd), list(expected)
    if set(map(str, keys)) != set(want):
        flat = [k for k in keys if "flat_param" in str(k) or "_fsdp_wrapped_module" in str(k)]
        why = M.both("flat_why", flat=str(flat[:2])) if flat else ""
        problems.append(M("model_keys", keys=sorted(map(str, keys)), want=sorted(want), why=why))
        return problems
    for name in want:
        v = sd[name]
        if not isinstance(v, torch.Tensor) or type(v) is not torch.Tensor:
            problems.append(M("not_plain_tensor", name=name, type=type(v).__name__))
            continue
        if tuple(v.shape) != tuple(expected[name].shape):
            problems.append(M("bad_shape", name=name, shape=_shape(v), want=_shape(expected[name])))
            continue
        if not torch.equal(v.detach().cpu().to(expected[name].dtype), expected[name]):
            d = (v.detach().cpu().double() - expected[name].double()).abs().max().item()
            problems.append(M("differs", name=name, d=f"{d:.3g}"))
    if not problems:
        plain = ft.make_model(123)
        try:
            plain.load_state_dict(sd, strict=True)
        except Exception as e:  # noqa: BLE001
            problems.append(M("no_load", type=type(e).__name__, error=e))
    ep = obj["epoch"]
    if isinstance(ep, torch.Tensor) and ep.numel() == 1:
        ep = ep.item()
    if isinstance(ep, bool) or not isinstance(ep, int) or ep != run.epoch:
        problems.append(M("bad_epoch", got=repr(obj["epoch"]), epoch=run.epoch))
    return problems


def optim_problems(obj, run: SaveRun) -> list[str]:
    """What is wrong with the "optim" part: it must be the FULL optimizer state."""
    osd = obj.get("optim") if isinstance(obj, Mapping) else None
    plain, popt = ft.plain_run(run.steps, seed=run.data_seed, kind=run.optimizer, data_seed=run.data_seed)
    names = [n for n, _ in plain.named_parameters()]
    params = dict(plain.named_parameters())
    opt_name = optimizer_name(run.optimizer)
    fix = M.both("optim_fix")
    if not isinstance(osd, Mapping) or not isinstance(osd.get("state"), Mapping) or not osd.get("state"):
        return [M("no_optim", summary=_summary(osd), opt=opt_name, fix=fix)]
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
        return [M("optim_entries", entries=sorted(map(str, state)), names=names, shapes=shapes, fix=fix)]
    problems = []
    for name in names:
        entry, ref = by_name[name], popt.state[params[name]]
        if not isinstance(entry, Mapping):
            problems.append(M("optim_not_dict", name=name, type=type(entry).__name__))
            continue
        for key in ("exp_avg", "exp_avg_sq"):
            got = entry.get(key)
            if not isinstance(got, torch.Tensor) or type(got) is not torch.Tensor:
                problems.append(M("optim_not_tensor", name=name, which=key, type=type(got).__name__, fix=fix))
                break
            if tuple(got.shape) != tuple(params[name].shape):
                problems.append(
                    M("optim_shape", name=name, which=key, shape=_shape(got), want=_shape(params[name]), fix=fix)
                )
                break
            want = ref[key]
            if not torch.allclose(got.detach().cpu().double(), want, rtol=RTOL, atol=ATOL):
                d = (got.detach().cpu().double() - want).abs().max().item()
                problems.append(M("optim_differs", name=name, which=key, opt=opt_name, steps=run.steps, d=f"{d:.3g}"))
                break
        step = entry.get("step")
        step = step.item() if isinstance(step, torch.Tensor) and step.numel() == 1 else step
        if step != run.steps:
            problems.append(M("optim_step", name=name, step=repr(step), steps=run.steps))
        if problems:
            break
    return problems


def _summary(x) -> Both:
    if x is None:
        return M.both("summary_missing")
    if isinstance(x, Mapping):
        return M.both("summary_empty" if "state" in x else "summary_keys", keys=sorted(map(str, x))[:6])
    return M.both("summary_type", type=type(x).__name__)


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
        who = f"rank {r}" if r > 0 else M.both("other_thread")
        problems.append(M("wrote", who=who, file=repr(os.path.basename(p))))
    name = os.path.basename(run.path)
    extra = sorted(set(entries) - {name})
    if extra and entries.get(name) != "dir":
        problems.append(M("left_beside", extra=extra))
    return problems


def complete_problems(run: SaveRun) -> list[str]:
    for rank in sorted(run.incomplete):
        why = run.incomplete[rank]
        if why:
            return [M("incomplete", rank=rank, why=why)]
    return []


def resume_problems(save: SaveRun, res: ResumeRun, bitwise: bool) -> list[str]:
    a, b = save.describe(), res.describe()
    where = Both(f"({a[0]}; {b[0]})", f"({a[1]}; {b[1]})")
    bad = [(r, e) for r, e in enumerate(res.epochs) if not epoch_matches(e, save.epoch)]
    if bad:
        r, e = bad[0]
        return [M("bad_return", got=repr(e), rank=r, epoch=save.epoch, where=where)]
    for name, want in save.saved.items():
        got = res.loaded.get(name)
        if got is None or not torch.equal(got, want):
            d = M.both("param_missing") if got is None else f"max |diff| {(got - want).abs().max().item():.3g}"
            return [M("param_not_saved", name=name, d=d, where=where)]
    for name, want in save.final.items():
        got = res.final[name]
        same = torch.equal(got, want) if bitwise else torch.allclose(got, want, rtol=RTOL, atol=ATOL)
        if not same:
            d = (got - want).abs().max().item()
            how = M.both("bit_for_bit") if bitwise else M.both("tolerance", tol=f"{RTOL:g}")
            return [
                M(
                    "resume_differs",
                    more=save.more,
                    name=name,
                    d=f"{d:.3g}",
                    how=how,
                    where=where,
                    opt=optimizer_name(save.optimizer),
                )
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
        return "\n" + M("offload")
    if "FSDP needs a non-CPU accelerator" in text:
        return "\n" + M("cpu_device")
    return ""


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
    load_nested: bool | None = None,
) -> bool:
    """Save at ``save_world`` ranks, inspect the file, resume at ``load_world`` ranks; print ✔/✘.
    ``nested``: one FSDP unit per Linear (else one for the model) at the save, and at the resume
    unless ``load_nested`` says otherwise (a resume compares bit for bit at the save's size and
    wrapping, as the hidden tests do)."""
    load_nested = nested if load_nested is None else load_nested
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
            report(False, M("sc_ran"), [run.error.message + hint(getattr(run.error, "exc", None))])
            return False
        report(True, M("sc_no_hang"))
        p = write_problems(run, listing(d))
        report(not p, M("sc_rank0"), p)
        p = complete_problems(run)
        report(not p, M("sc_complete"), p)
        obj, why = load_file(run.path, run.note)
        if why:
            report(False, M("sc_load"), [why])
            return False
        p = file_problems(obj, run)
        report(
            not p,
            M("sc_model"),
            p,
        )
        p = optim_problems(obj, run)
        report(not p, M("sc_optim", opt=optimizer_name(optimizer)), p)
        res = run_resume(
            load_checkpoint,
            run.path,
            world=load_world,
            start=steps,
            more=more,
            optimizer=optimizer,
            nested=load_nested,
            guard_s=30,
        )
        if res.error is not None:
            if isinstance(getattr(res.error, "exc", None), NotImplementedError):
                print(FRAME("stub_named", what="load_checkpoint"))
                return False
            report(
                False,
                M("sc_load_ran", world=load_world),
                [res.error.message + hint(getattr(res.error, "exc", None))],
            )
            return False
        p = resume_problems(run, res, bitwise=(load_world == save_world and load_nested == nested))
        report(
            not p,
            M("sc_resumed", world=load_world, more=more),
            p,
        )
    return ok
