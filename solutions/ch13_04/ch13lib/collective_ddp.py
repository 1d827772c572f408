"""DDP by hand, checked against single-process training (the `ddp_average` exercise).

Every rank of a real world (started by ``collective_launch.launch``) trains the same small model
on its own shard of each batch and calls the answer's ``average_gradients(model)`` after
``loss.backward()``. With equal shards and a mean loss, the average of the ranks' gradients IS the
full-batch gradient, so a right answer agrees with a single-process model trained on the whole
batch up to rounding, on every rank, at every step.

The run and the verdict are apart (docs/design.md, "Judge and subject"): :func:`observe` (run by
:func:`observe_ddp_rank`, one rank of a world, and by the grading side's harnesses,
kit/harnesses/collective_ddp.py: world size 1 in the subject, and a rank of a relayed world) only
records, per step, each parameter's gradient before and after ``average_gradients`` and its value
after ``optimizer.step()``; :func:`reference` trains the single-process model from the scenario
alone, and :func:`compare` finds the first step where a rank's record leaves it, with a diagnosis.
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from ch13lib.lang import Messages

# What the comparison says, in the course's language (ch13lib/lang.py): a step's problem is
# ``step`` with one of the phrases after it.
M = Messages(
    step=("第 {step} 步: {what}", "step {step}: {what}"),
    crash=("第 {step} 步: average_gradients 抛出了异常:", "step {step}: average_gradients raised an exception:"),
    grad_none=(
        "调用 average_gradients 之后 {name}.grad 是 None (调用之前它有梯度)",
        "{name}.grad is None after average_gradients (it had a gradient before the call)",
    ),
    grad_shape=("{name}.grad 的形状变成了 {shape}", "{name}.grad changed shape to {shape}"),
    summed=(
        "{name}.grad 是全批次梯度的 {w} 倍。\nall_reduce 对各 rank 的梯度求和 (SUM); 要求平均, 请除以 world size "
        "(dist.get_world_size())",
        "{name}.grad is {w}× the full-batch gradient.\nall_reduce SUMS the ranks' gradients; divide by the world "
        "size (dist.get_world_size()) to average",
    ),
    own=(
        "{name}.grad 仍是这个 rank 自己的梯度。\n它没有被平均 (all_reduce 原地作用于传给它的张量; 像 "
        "p.grad.clone() 这样的副本被规约后就被丢掉了)",
        "{name}.grad is still this rank's own gradient.\nit was not averaged (all_reduce works in place on the "
        "tensor you pass it; a copy such as p.grad.clone() is reduced and thrown away)",
    ),
    fixed_one=(
        "{name}.grad 是全批次梯度的 {k} 倍: all_reduce 的和被除以了 {d}, 但运行的只有 {w} 个进程。\n除以一个固定的数"
        "只在一种 world size 下正确: 请除以 dist.get_world_size()",
        "{name}.grad is {k}× the full-batch gradient: the all_reduce SUM was divided by {d}, but {w} process ran.\n"
        "Dividing by a fixed number is right in one world size only: divide by dist.get_world_size()",
    ),
    fixed_many=(
        "{name}.grad 是全批次梯度的 {k} 倍: all_reduce 的和被除以了 {d}, 但运行的是 {w} 个进程。\n除以一个固定的数"
        "只在一种 world size 下正确: 请除以 dist.get_world_size()",
        "{name}.grad is {k}× the full-batch gradient: the all_reduce SUM was divided by {d}, but {w} processes "
        "ran.\nDividing by a fixed number is right in one world size only: divide by dist.get_world_size()",
    ),
    factor=(
        "{name}.grad 是全批次梯度的 {k} 倍 (world size {w})。\n平均值是 all_reduce 的和除以 dist.get_world_size()",
        "{name}.grad is {k}× the full-batch gradient (world size {w}).\nthe average is the all_reduce SUM divided by "
        "dist.get_world_size()",
    ),
    off_scaled=(
        "{name}.grad 与平均后的梯度最多相差 {err} (第一个参与训练的参数得到的是全批次梯度的 {scale} 倍, "
        "所以每个参数都应如此)",
        "{name}.grad differs by up to {err} from the averaged gradient (the first trained parameter got "
        "{scale}× the full-batch gradient, so every one should)",
    ),
    off=(
        "{name}.grad 与全批次梯度最多相差 {err}",
        "{name}.grad differs from the full-batch gradient by up to {err}",
    ),
    stopped=("这个 rank 在这一步之前就停止了", "the rank stopped before this step"),
    frozen=(
        "{name} 是冻结的 (requires_grad=False), 但现在有了 .grad",
        "{name} is frozen (requires_grad=False) but now has a .grad",
    ),
    params=(
        "optimizer.step() 之后参数 {name} 与单进程训练不同 (average_gradients 改动了参数吗?)",
        "after optimizer.step() the parameter {name} differs from single-process training (did "
        "average_gradients change the parameters?)",
    ),
    unreadable=("这个 rank 的报告无法读取 ({type})", "the rank's report could not be read ({type})"),
)


class Net(nn.Module):
    def __init__(self, d_in: int, hidden: int, frozen: bool) -> None:
        super().__init__()
        self.embed = nn.Linear(d_in, d_in)
        self.hidden = nn.Linear(d_in, hidden)
        self.head = nn.Linear(hidden, 1)
        if frozen:  # like a frozen backbone in fine-tuning: no .grad at all
            self.embed.requires_grad_(False)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(self.embed(x))))


def _make(sc: dict, device) -> nn.Module:
    # The seed is hidden (graders/_hidden.py): the global generator must not keep it, or a cell reads
    # it back and rebuilds every rank's batch with no communication at all. fork_rng restores the CPU
    # generator's state and seed on exit; devices=[] leaves the CUDA generators alone (torch.manual_seed
    # would seed them too).
    with torch.random.fork_rng(devices=[]):
        torch.random.default_generator.manual_seed(sc["seed"])
        net = Net(sc["d_in"], sc["hidden"], sc.get("frozen", False))
    return net.to(device=device, dtype=torch.float64)


def _zero_grad(model: nn.Module) -> None:
    """``optimizer.zero_grad()`` of an SGD over the trainable parameters (sets their .grad to None)."""
    for p in model.parameters():
        if p.requires_grad:
            p.grad = None


def _sgd_step(model: nn.Module, lr: float) -> None:
    """``optimizer.step()`` of plain SGD (no momentum, no weight decay), as torch.optim.SGD does it:
    ``p -= lr * p.grad`` for every trainable parameter that has a .grad, read at step time. (Building
    a torch.optim optimizer first imports torch._dynamo: seconds of CPU in every process.)"""
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad and p.grad is not None:
                p.add_(p.grad, alpha=-lr)


def _batches(sc: dict, device):
    """The scenario's batches (x, y), one per step, the same in every process."""
    g = torch.Generator().manual_seed(sc["seed"] + 1)
    for _ in range(sc["steps"]):
        x = torch.randn(sc["batch"], sc["d_in"], generator=g, dtype=torch.float64).to(device)
        y = torch.randn(sc["batch"], 1, generator=g, dtype=torch.float64).to(device)
        yield x, y


def _record(t) -> dict | None:
    """A tensor as plain data (shape and float64 values), None for a missing .grad."""
    if t is None:
        return None
    t = t.detach()
    return {"shape": list(t.shape), "data": t.to("cpu", torch.float64).reshape(-1).tolist()}


def _tensor(rec) -> torch.Tensor | None:
    """A record of :func:`_record` back as a tensor; ValueError when it is not one."""
    if rec is None:
        return None
    if not isinstance(rec, dict) or not isinstance(rec.get("shape"), list) or not isinstance(rec.get("data"), list):
        raise ValueError("a malformed tensor record")
    return torch.tensor(rec["data"], dtype=torch.float64).reshape(rec["shape"])


def _model_and_shards(sc: dict, device, rank: int, world: int):
    """The scenario's model and this rank's shard of each step's batch: built from the scenario's
    seed, or, on a relayed rank, the judge's own values (``weights``, ``shards``: this rank's alone)."""
    if "weights" in sc:
        model = Net(sc["d_in"], sc["hidden"], sc.get("frozen", False)).to(dtype=torch.float64)
        model.load_state_dict(sc["weights"])
        return model.to(device), [(x.to(device), y.to(device)) for x, y in sc["shards"]]
    shard = sc["batch"] // world
    batches = _batches(sc, device)
    return _make(sc, device), [
        (x[rank * shard : (rank + 1) * shard], y[rank * shard : (rank + 1) * shard]) for x, y in batches
    ]


def observe(
    fn, scenarios: list[dict], *, device="cpu", rank: int = 0, world: int = 1, stub_raises: bool = False
) -> list[dict]:
    """Train each scenario's model on this rank's shards with ``fn(model)`` after backward().

    Per scenario ``{"steps": [{"local", "grads", "params"}], "crash": None}``: each parameter's
    gradient before ``fn`` (``local``) and after it (``grads``), and its value after the SGD
    step (``params``), as :func:`_record` s. An exception from ``fn`` ends the rank
    (its peers then fail on the process group): ``"crash": {"step", "text"}`` and nothing after.
    """
    from ch13lib.collective_launch import own_traceback

    report: list = []
    for sc in scenarios:
        model, shards = _model_and_shards(sc, device, rank, world)
        steps: list = []
        report.append({"steps": steps, "crash": None})
        # Every rank runs every step whatever its gradients, so all ranks keep making the same
        # collective calls; only an exception stops the rank (and with it the world).
        for step, (xs, ys) in enumerate(shards):
            _zero_grad(model)
            nn.functional.mse_loss(model(xs), ys).backward()
            local = {n: _record(p.grad) for n, p in model.named_parameters()}
            try:
                fn(model)
                if device != "cpu":
                    torch.cuda.synchronize()
            except BaseException as e:  # noqa: BLE001 - reported as this rank's failure
                if stub_raises and isinstance(e, NotImplementedError):
                    raise
                report[-1]["crash"] = {
                    "step": step,
                    "text": M("crash", step=step) + f"\n{own_traceback(e)}",
                }
                return report
            grads = {n: _record(p.grad) for n, p in model.named_parameters()}
            _sgd_step(model, sc["lr"])
            steps.append(
                {"local": local, "grads": grads, "params": {n: _record(p) for n, p in model.named_parameters()}}
            )
    return report


def observe_ddp_rank(payload: dict) -> dict:
    """``collective_launch`` target, one rank of a real world. payload: source, name, function,
    device, scenarios (dicts of seed, d_in, hidden, batch, steps, lr, frozen). Returns
    ``{"scenarios": observe(...)}``: records only, no verdict."""
    import torch.distributed as dist

    from ch13lib.collective_launch import load_source

    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", rank) if payload.get("device") == "cuda" else "cpu"
    fn = getattr(load_source(payload["source"], payload["name"]), payload["function"])
    return {"scenarios": observe(fn, payload["scenarios"], device=device, rank=rank, world=world)}


# ---------------------------------------------------------------- the verdict (from records alone)


def reference(sc: dict, scale: float = 1.0) -> list[tuple[dict, dict]]:
    """Single-process training on the whole batch, per step: (full-batch gradients, None where
    frozen; parameters after the step). ``scale`` multiplies the learning rate: the trajectory of
    a rank whose gradients are ``scale`` × the full-batch ones. Read-only (cached: every rank of a
    world is compared with the same one)."""
    return _reference(tuple(sorted(sc.items())), float(scale))


@functools.lru_cache(maxsize=32)
def _reference(key: tuple, scale: float) -> list[tuple[dict, dict]]:
    sc = dict(key)
    model = _make(sc, "cpu")
    out = []
    for x, y in _batches(sc, "cpu"):
        _zero_grad(model)
        nn.functional.mse_loss(model(x), y).backward()
        grads = {n: None if p.grad is None else p.grad.detach().clone() for n, p in model.named_parameters()}
        _sgd_step(model, sc["lr"] * scale)
        out.append((grads, {n: p.detach().clone() for n, p in model.named_parameters()}))
    return out


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a, b, rtol=1e-9, atol=1e-12))


def _diagnose(name: str, got, full, local, world: int, scale: float = 1.0):
    """What is wrong with parameter ``name``'s gradient ``got``: a phrase (M.both) after "step s: "."""
    if got is None:
        return M.both("grad_none", name=name)
    if got.shape != full.shape:
        return M.both("grad_shape", name=name, shape=tuple(got.shape))
    if scale == 1.0 and world > 1 and _close(got, full * world):
        return M.both("summed", name=name, w=world)
    if local is not None and _close(got, local):
        return M.both("own", name=name)
    if scale == 1.0:
        k = float((got * full).sum() / (full * full).sum().clamp_min(1e-300))
        if abs(k) > 1e-6 and _close(got, full * k):
            d = world / k
            if round(d) >= 1 and abs(d - round(d)) < 1e-6:
                key = "fixed_many" if world != 1 else "fixed_one"
                return M.both(key, name=name, k=f"{k:.4g}", d=round(d), w=world)
            return M.both("factor", name=name, k=f"{k:.4g}", w=world)
    err = (got - full * scale).abs().max().item()
    if scale != 1.0:
        return M.both("off_scaled", name=name, err=f"{err:.3g}", scale=f"{scale:.4g}")
    return M.both("off", name=name, err=f"{err:.3g}")


def fit_scale(sc: dict, steps: list[dict]) -> float:
    """The factor k with which this rank's first trained parameter got k × its full-batch gradient
    at step 0 (1.0 when there is no such k): what a wrong divisor does to every gradient."""
    if not steps:
        return 1.0
    grads0 = reference(sc)[0][0]
    for name, q in grads0.items():
        if q is None or not bool(q.abs().sum() > 0):
            continue
        try:
            got = _tensor(steps[0]["grads"].get(name))
        except (ValueError, RuntimeError, TypeError, KeyError, AttributeError):
            return 1.0
        if got is None or got.shape != q.shape:
            return 1.0
        k = float((got * q).sum() / (q * q).sum())
        return k if k > 1e-6 and _close(got, q * k) else 1.0
    return 1.0


def compare(sc: dict, world: int, steps: list[dict], *, scale: float = 1.0) -> dict | None:
    """The first step where a rank's records leave single-process training: ``{"step", "text"}``,
    or None. ``scale``: the gradients are expected to be ``scale`` × the full-batch ones (and the
    parameters to follow; 1.0 for the exercise's average)."""
    ref = reference(sc, scale)
    try:
        for step, (want_grads, want_params) in enumerate(ref):
            if step >= len(steps):
                return {"step": step, "text": M("step", step=step, what=M.both("stopped"))}
            obs = steps[step]
            for name, q in want_grads.items():
                got = _tensor(obs["grads"].get(name))
                if q is None:
                    if got is not None and bool(got.abs().sum() != 0):
                        return {"step": step, "text": M("step", step=step, what=M.both("frozen", name=name))}
                    continue
                if got is None or got.shape != q.shape or not _close(got, q * scale):
                    local = _tensor(obs["local"].get(name))
                    what = _diagnose(name, got, q, local, world, scale)
                    return {"step": step, "text": M("step", step=step, what=what)}
            for name, q in want_params.items():
                got = _tensor(obs["params"].get(name))
                if got is None or got.shape != q.shape or not _close(got, q):
                    return {"step": step, "text": M("step", step=step, what=M.both("params", name=name))}
    except (ValueError, RuntimeError, TypeError, KeyError, AttributeError) as e:
        return {"step": 0, "text": M("unreadable", type=type(e).__name__)}
    return None
