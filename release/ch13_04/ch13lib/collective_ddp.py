"""DDP by hand, checked against single-process training (the `ddp_average` exercise).

Every rank of a real world (started by ``collective_launch.launch``) trains the same small model
on its own shard of each batch, calls the answer's ``average_gradients(model)`` after
``loss.backward()``, and compares, step by step, its gradients and then its parameters with a
single-process model trained on the whole batch in the same process. With equal shards and a
mean loss, the average of the ranks' gradients IS the full-batch gradient, so a right answer
agrees up to rounding, on every rank, at every step.
"""
from __future__ import annotations

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, d_in: int, hidden: int, frozen: bool) -> None:
        super().__init__()
        self.embed = nn.Linear(d_in, d_in)
        self.hidden = nn.Linear(d_in, hidden)
        self.head = nn.Linear(hidden, 1)
        if frozen:      # like a frozen backbone in fine-tuning: no .grad at all
            self.embed.requires_grad_(False)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(self.embed(x))))


def _make(sc: dict, device) -> nn.Module:
    torch.manual_seed(sc["seed"])
    return Net(sc["d_in"], sc["hidden"], sc.get("frozen", False)).to(device=device, dtype=torch.float64)


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a, b, rtol=1e-9, atol=1e-12))


def _diagnose(name: str, got, full, local, world: int) -> str:
    if got is None:
        return f"{name}.grad is None after average_gradients (it had a gradient before the call)"
    if got.shape != full.shape:
        return f"{name}.grad changed shape to {tuple(got.shape)}"
    if _close(got, full * world):
        return (f"{name}.grad is {world}× the full-batch gradient: all_reduce SUMS the ranks' gradients; "
                f"divide by the world size ({world}) to average")
    if local is not None and _close(got, local):
        return (f"{name}.grad is still this rank's own gradient: it was not averaged (all_reduce works in "
                f"place on the tensor you pass it; a copy such as p.grad.clone() is reduced and thrown away)")
    k = float((got * full).sum() / (full * full).sum().clamp_min(1e-300))
    if abs(k) > 1e-6 and _close(got, full * k):
        return (f"{name}.grad is {k:.4g}× the full-batch gradient: the average is the all_reduce SUM divided "
                f"by dist.get_world_size(), here {world}")
    err = (got - full).abs().max().item()
    return f"{name}.grad differs from the full-batch gradient by up to {err:.3g}"


def run_ddp_rank(payload: dict) -> dict:
    """``collective_launch`` target. payload: source, name, function, device, scenarios (dicts of
    seed, d_in, hidden, batch, steps, lr, frozen). Returns, per scenario, None or the first problem."""
    import torch.distributed as dist
    from ch13lib.collective_launch import load_source, own_traceback
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(payload.get("device", "cpu"), rank) if payload.get("device") == "cuda" else "cpu"
    fn = getattr(load_source(payload["source"], payload["name"]), payload["function"])
    report: list = []
    for sc in payload["scenarios"]:
        model, ref = _make(sc, device), _make(sc, device)
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=sc["lr"])
        ref_opt = torch.optim.SGD([p for p in ref.parameters() if p.requires_grad], lr=sc["lr"])
        g = torch.Generator().manual_seed(sc["seed"] + 1)
        b, shard = sc["batch"], sc["batch"] // world
        problem = None
        # Every rank runs every step even after a mismatch, so all ranks keep making the same
        # collective calls; only an exception stops the rank (and with it the world).
        for step in range(sc["steps"]):
            x = torch.randn(b, sc["d_in"], generator=g, dtype=torch.float64).to(device)
            y = torch.randn(b, 1, generator=g, dtype=torch.float64).to(device)
            xs, ys = x[rank * shard:(rank + 1) * shard], y[rank * shard:(rank + 1) * shard]
            opt.zero_grad()
            nn.functional.mse_loss(model(xs), ys).backward()
            local = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
            try:
                fn(model)
                if device != "cpu":
                    torch.cuda.synchronize()
            except BaseException as e:    # noqa: BLE001 - reported as this rank's failure
                report.append({"step": step, "crash": True,
                               "text": f"step {step}: average_gradients raised an exception:\n{own_traceback(e)}"})
                return {"scenarios": report}
            ref_opt.zero_grad()
            nn.functional.mse_loss(ref(x), y).backward()
            for (name, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
                if problem:
                    break
                if q.grad is None:
                    if p.grad is not None and p.grad.abs().sum() != 0:
                        problem = f"step {step}: {name} is frozen (requires_grad=False) but now has a .grad"
                elif p.grad is None or p.grad.shape != q.grad.shape or not _close(p.grad, q.grad):
                    problem = f"step {step}: " + _diagnose(name, p.grad, q.grad, local.get(name), world)
            opt.step()
            ref_opt.step()
            for (name, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
                if not problem and not _close(p.detach(), q.detach()):
                    problem = (f"step {step}: after optimizer.step() the parameter {name} differs from "
                               f"single-process training (did average_gradients change the parameters?)")
            if problem and not isinstance(problem, dict):
                problem = {"step": step, "crash": False, "text": problem}
        report.append(problem)
    return {"scenarios": report}
