"""Cases, references and verdicts for notebook 07 (pipeline, tensor and ZeRO parallelism).

A case fixes everything a run depends on (sizes, dtype, the seed of the values, the simulator's
schedule), so every failure replays exactly with the self-checks of ``ch13lib.parallel_checks``.

Grading splits in two (docs/design.md, "Judge and subject"): the harnesses of
``ch13lib.parallel_sim`` run the answer cell on the simulated process group (or a real gloo world)
and report plain observations (tensors, return values, the comm calls each rank made, the
schedule's ticks); the functions here regenerate the inputs from the case, compute the expected
values independently of the answer (a single-process full-batch step, the unsharded MLP,
averaged gradients + ``torch.optim.Adam``) and explain what is wrong.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from fractions import Fraction

import torch
import torch.nn.functional as F
from torch import nn

from ch13lib.cell import expected_got

DTYPES = {"float32": torch.float32, "float64": torch.float64}
LOSSES = {"mse": F.mse_loss, "cross_entropy": F.cross_entropy}


def _kwargs(case) -> dict:  # what a replay line prints: never the judge's key
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in dataclasses.asdict(case).items() if k != "key"}


def _call(fn_name: str, check: str, case) -> str:
    call = f"{check}({fn_name}, " + ", ".join(f"{k}={v!r}" for k, v in _kwargs(case).items()) + ")"
    if case.key:
        call += " (the grader's values were hidden ones; this draws public values of the same sizes and schedule)"
    return call


def _gen(case, salt: int) -> torch.Generator:
    """The generator of one kind of the case's values. A case's ``key`` (0 unless the judge set it,
    from a secret of its own: graders/_hidden.py) mixes into the seed, so values drawn under a key
    cannot be found from the case's public fields: such a case's ranks get their inputs from the
    judge (:func:`rank_inputs`), never the case's seed and key."""
    if not case.key:
        return torch.Generator().manual_seed(case.seed * 1009 + salt)
    digest = hashlib.sha256(f"{case.key}:{case.seed}:{salt}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "big") >> 1)


# ---------------------------------------------------------------------------------------------
# pipeline (GPipe)
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PipeCase:
    stages: int  # P, one stage per rank
    n_micro: int  # m
    micro_rows: int = 2  # rows per micro-batch
    widths: tuple[int, ...] = ()  # P + 1 feature sizes (default: 3 everywhere)
    loss: str = "mse"  # mse | cross_entropy
    seed: int = 0
    grad_init: bool = False  # every .grad already holds something before the call
    policy: str = "stay"
    schedule_seed: int = 0
    key: int = 0  # the judge's hidden values (see _gen); never printed, never sent to a rank

    def __post_init__(self):
        if not self.widths:
            object.__setattr__(self, "widths", (3,) * (self.stages + 1))
        object.__setattr__(self, "widths", tuple(self.widths))

    @property
    def rows(self) -> int:
        return self.n_micro * self.micro_rows

    def bound(self) -> int:
        """GPipe's schedule length on the logical clock: 2(m + P − 1)."""
        return 2 * (self.n_micro + self.stages - 1)

    def label(self) -> str:
        return (
            f"P={self.stages} stages, m={self.n_micro} micro-batches of {self.micro_rows} row"
            f"{'s' if self.micro_rows != 1 else ''}, widths {list(self.widths)}, loss {self.loss}"
            + (", .grad pre-filled" if self.grad_init else "")
        )

    def replay(self, fn_name: str = "gpipe_step") -> str:
        return _call(fn_name, "check_pipeline_case", self)


class Stage(nn.Module):
    """One pipeline stage: a linear layer, then tanh (the last stage is linear only)."""

    def __init__(self, d_in: int, d_out: int, last: bool) -> None:
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        self.in_features, self.out_features, self.last = d_in, d_out, last

    def forward(self, x):
        y = self.linear(x)
        return y if self.last else torch.tanh(y)


def make_stages(case: PipeCase, dtype=torch.float32, device: str = "cpu") -> list[Stage]:
    """The case's model, stage by stage, with seeded weights (and pre-filled .grad if asked)."""
    g = _gen(case, 1)
    out = []
    for r in range(case.stages):
        d_in, d_out = case.widths[r], case.widths[r + 1]
        st = Stage(d_in, d_out, r == case.stages - 1)
        with torch.no_grad():
            st.linear.weight.copy_(torch.randn(d_out, d_in, generator=g, dtype=torch.float64) / math.sqrt(d_in))
            st.linear.bias.copy_(torch.randn(d_out, generator=g, dtype=torch.float64) * 0.3)
        out.append(st.float().to(device=device, dtype=dtype))  # float32 values, whatever dtype is asked
    if case.grad_init:
        for st in out:
            for p in st.parameters():
                p.grad = (torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.5).float().to(device, dtype)
    return out


def make_batch(case: PipeCase, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """(batch, target): float32 rows for rank 0, the target for rank P-1."""
    g = _gen(case, 2)
    x = torch.randn(case.rows, case.widths[0], generator=g, dtype=torch.float64).float()
    if case.loss == "cross_entropy":
        t = torch.randint(0, case.widths[-1], (case.rows,), generator=g)
    else:
        t = torch.randn(case.rows, case.widths[-1], generator=g, dtype=torch.float64).float()
    return x.to(device), t.to(device)


def pipeline_reference(case: PipeCase) -> dict:
    """The single-process full-batch step in float64: ``{"loss": float, "grads": [[flat]...],
    "own": [[flat]...]}`` (grads: what .grad must hold afterwards; own: this step's part)."""
    stages = make_stages(case, dtype=torch.float64)
    before = [[p.grad.clone() if p.grad is not None else None for p in st.parameters()] for st in stages]
    for st in stages:
        for p in st.parameters():
            p.grad = None
    x, t = make_batch(case)
    h = x.double()
    for st in stages:
        h = st(h)
    loss = LOSSES[case.loss](h, t if case.loss == "cross_entropy" else t.double())
    loss.backward()
    grads, own = [], []
    for r, st in enumerate(stages):
        gs, os_ = [], []
        for p, b in zip(st.parameters(), before[r]):
            g = p.grad.detach().reshape(-1).clone()
            os_.append(g.clone())
            gs.append(g + (b.reshape(-1) if b is not None else 0))
        grads.append(gs)
        own.append(os_)
    return {"loss": loss.item(), "grads": grads, "own": own, "before": before}


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol))


def pipeline_verdict(case: PipeCase, seen: dict, fn_name: str = "gpipe_step", ref: dict | None = None) -> str | None:
    """None when every stage's .grad and the returned loss match the full-batch step; otherwise why.

    ``seen``: ``{"returns": [per rank], "grads": [per rank: [flat tensor or None per parameter]]}``."""
    ref = ref or pipeline_reference(case)
    P, m = case.stages, case.n_micro
    head = f"{case.label()}"
    replay = f"Replay: {case.replay(fn_name)}"
    grads = seen.get("grads")
    if not isinstance(grads, list) or len(grads) != P:
        return f"{head}: the run's report came back malformed"
    for r in range(P):
        got_r, want_r, own_r = grads[r], ref["grads"][r], ref["own"][r]
        before_r = ref["before"][r]
        for i, (got, want, own) in enumerate(zip(got_r, want_r, own_r)):
            what = f"stage {r}'s {'weight' if i == 0 else 'bias'}"
            b = before_r[i].reshape(-1).double() if before_r[i] is not None else torch.zeros_like(own)
            if got is None or not isinstance(got, torch.Tensor):
                hint = (
                    " The gradient of the activations never reached it: on every stage but the first, make the "
                    "received activation require grad (x.requires_grad_()), run the stage on it, and after its "
                    "backward send x.grad back to the previous rank, which calls out.backward(that gradient)."
                    if r < P - 1
                    else " Call backward on the scaled micro-batch losses."
                )
                return f"{head}: {what} has no .grad after the call.{hint} {replay}"
            got = got.reshape(-1).double()
            if _close(got, want):
                continue
            if case.grad_init and _close(got, own):
                why = (
                    "it holds this step's gradient only: the .grad it had before the call is gone. Do not zero "
                    "or replace .grad (no zero_grad(), no p.grad = ...); backward() accumulates on top of it"
                )
            elif _close(got, b) and float(own.abs().max()) > 1e-6:
                why = (
                    "it did not change: this stage got no gradient (activations detached before being sent, "
                    "or the gradient sent back was never used in a backward)"
                    if r < P - 1
                    else "it did not change: no backward ran on this stage"
                )
            elif m > 1 and _close(got, b + own * m):
                why = (
                    f"it is {m}× the full-batch gradient: scale each micro-batch's loss by 1/n_micro before its "
                    "backward (loss_fn's mean over a micro-batch, summed over m micro-batches, is m times the mean)"
                )
            elif m > 1 and _close(got, b + own / m):
                why = f"it is 1/{m} of the full-batch gradient: the losses were scaled by 1/n_micro twice"
            else:
                bad = (~torch.isclose(got, want, rtol=1e-4, atol=1e-5)).nonzero().flatten().tolist() or [0]
                k = bad[0]
                why = (
                    f"{len(bad)} of {want.numel()} elements differ from one full-batch step of the whole model; "
                    f"the first at flat index {k}: "
                    + expected_got(f"{float(want[k]):.6g}", f"{float(got[k]):.6g}", bool(case.key))
                )
            return f"{head}: {what}.grad is wrong after the call: {why}. {replay}"
    returns = seen.get("returns")
    if not isinstance(returns, list) or len(returns) != P:
        return f"{head}: the run's report came back malformed"
    for r in range(P - 1):
        if returns[r] is not None:
            return (
                f"{head}: rank {r} returned {_describe_return(returns[r])}; only rank P-1 returns the loss, "
                f"every other rank None. {replay}"
            )
    last = returns[P - 1]
    if not (isinstance(last, dict) and last.get("kind") == "float"):
        return (
            f"{head}: rank {P - 1} (the last stage) returned {_describe_return(last)}, not the mean loss as a "
            f"Python float (loss.item()). {replay}"
        )
    got, want = float(last["value"]), ref["loss"]
    if abs(got - want) <= 1e-4 * abs(want) + 1e-5:
        return None
    if m > 1 and abs(got - want * m) <= 1e-4 * abs(want * m) + 1e-5:
        why = f"it is {m}× the mean loss: the micro-batch losses were summed, not averaged (scale each by 1/n_micro)"
    else:
        why = expected_got(f"{want:.6g} (loss_fn's mean over the whole batch)", f"{got:.6g}", bool(case.key))
    return f"{head}: the returned loss is wrong: {why}. {replay}"


def _describe_return(v) -> str:
    if v is None:
        return "None"
    if isinstance(v, dict):
        if v.get("kind") == "float":
            return f"{v.get('value')!r}"
        if v.get("kind") == "tensor":
            return f"a tensor ({v.get('value')!r})"
        return f"a {v.get('type', '?')}"
    return repr(v)


def schedule_chart(timeline: list, stages: int, length: float, max_ticks: int = 48) -> str:
    """The schedule as ranks × ticks: F3 = the forward of micro-batch 3, B3 its backward, . idle."""
    n = min(int(math.ceil(length - 1e-9)), max_ticks)
    rows = [["."] * n for _ in range(stages)]
    for ev in timeline:
        r, start, end, kind, first = ev[0], float(ev[1]), float(ev[2]), str(ev[3]), int(ev[4])
        if not 0 <= r < stages:
            continue
        k = max(1, round(end - start))
        for j in range(k):
            t = int(math.floor(start + 1e-9)) + j
            if 0 <= t < n:
                rows[r][t] = f"{kind}{first + j}"
    w = max([len(c) for row in rows for c in row] + [len(str(max(n - 1, 0)))]) + 1
    head = "tick    " + "".join(str(t).rjust(w) for t in range(n))
    lines = [head] + [f"rank {r}  " + "".join(c.rjust(w) for c in rows[r]) for r in range(stages)]
    if length > max_ticks:
        lines.append(f"(first {max_ticks} of {length:g} ticks)")
    return "\n".join(lines)


def schedule_problem(case: PipeCase, seen: dict, fn_name: str = "gpipe_step") -> str | None:
    """None when the schedule is no longer than GPipe's 2(m + P − 1) ticks, every stage did the whole
    batch's work, and (on a relayed world, whose ``flow`` the judge observed) every charge followed
    the data it was for; otherwise why, with the chart."""
    length = seen.get("length")
    if not isinstance(length, (int, float)):
        return f"{case.label()}: the run's report came back malformed"
    bound = case.bound()
    P, m = case.stages, case.n_micro
    timeline = seen.get("timeline") or []
    for r in range(P):  # every rank's stage worked through the whole batch, forward and backward
        for kind, name in (("F", "forward"), ("B", "backward")):
            done = sum(float(ev[2]) - float(ev[1]) for ev in timeline if ev[0] == r and str(ev[3]) == kind)
            if done < m - 1e-9:
                return (
                    f"{case.label()}: rank {r}'s stage ran {name} on {done:g} micro-batches' worth of rows, not "
                    f"{m}: call the stage itself (stage(x)) for the forward and backward of every micro-batch; "
                    f"running a module found inside it, or its parameters by hand, skips the work the schedule "
                    f"is measured on. Replay: {case.replay(fn_name)}"
                )
    if seen.get("flow") is not None:  # a relayed world's: the charges must follow the data
        problem = dataflow_problem(case, seen["flow"], fn_name)
        if problem:
            return problem
    if length <= bound + 1e-9:
        return None
    chart = schedule_chart(seen.get("timeline") or [], P, float(length))
    hints = []
    if abs(length - 2 * P * m) < 1e-9:
        hints.append(
            "2·P·m ticks: no two stages ever work at the same time (the whole batch at once, or one "
            "micro-batch all the way forward and back before the next starts)"
        )
    return (
        f"the schedule is too long: {case.label()}: it took {float(length):g} ticks, GPipe takes 2(m + P − 1) = "
        f"2({m} + {P} − 1) = {bound}. " + (hints[0] + ". " if hints else "") + "Every stage should forward "
        "micro-batch i as soon as it arrives and pass it on at once, then run the backward passes as their "
        "gradients arrive (F = forward, B = backward of that micro-batch, . = idle):\n"
        + chart
        + f"\nReplay: {case.replay(fn_name)}"
    )


def _rows_found(t, expected: torch.Tensor, factors=(1,)) -> set:
    """Which rows of ``expected`` (times one of ``factors``) appear in ``t`` as contiguous runs of
    its flattened values (so a message may hold a header, several rows or a whole batch): each run
    of ``t`` counts for at most one row, the closest, within float32's error of the row's values."""
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        return set()
    w = expected.shape[1]
    flat = t.detach().to("cpu", torch.float64).reshape(-1)
    if flat.numel() < w or flat.numel() > 64 * expected.numel():  # too short, or not a pipeline message
        return set()
    windows = flat.unfold(0, w, 1)
    found = set()
    for f in factors:
        rows = expected * f
        diff = (windows[:, None, :] - rows[None]).abs()
        scale = rows.abs().amax().clamp_min(1e-30)
        close = (diff <= 1e-5 * scale + 1e-4 * rows[None].abs()).all(-1)  # (windows, rows)
        best = diff.amax(-1).argmin(1)  # each window's closest row
        found |= {int(best[i]) for i in range(windows.shape[0]) if bool(close[i, best[i]])}
    return found


def _flow_reference(case: PipeCase) -> tuple[list, list]:
    """(activations, gradients) of the whole batch in float64: activations[r] is what rank r
    receives from rank r - 1 (the batch for r = 0), gradients[r] the loss's gradient with respect
    to it (what rank r sends back to rank r - 1)."""
    stages = make_stages(case, dtype=torch.float64)
    x, t = make_batch(case)
    h = x.double().requires_grad_()
    acts = [h]
    for st in stages:
        h = st(h)
        h.retain_grad()
        acts.append(h)
    LOSSES[case.loss](h, t if case.loss == "cross_entropy" else t.double()).backward()
    return [a.detach() for a in acts], [a.grad.detach() for a in acts]


def dataflow_problem(case: PipeCase, flow: list, fn_name: str = "gpipe_step") -> str | None:
    """None when every rank's clock charges follow its data: a stage's forward runs on no more rows
    than the activations it has received, its backward on no more than the gradients it has
    received, and it sends on no more activations (gradients) than its forward (backward) has run
    on. ``flow``: a relayed world's data flow (procgroup.SimWorld.flow), in each rank's call order.
    Rows are found by value: the gradients are those of the mean loss (each micro-batch's loss
    divided by m; the micro-batches are of equal size), or of that loss times m, the micro-batch
    size or both (a right answer may divide by m at the end, or sum over rows, and keeps the
    schedule's points).
    A charge made on other data (a stage called on zeros while the real work is done by hand)
    would otherwise let a schedule look pipelined that is not."""
    P, mr = case.stages, case.micro_rows
    if P == 1:
        return None
    acts, grads = _flow_reference(case)
    total = acts[0].shape[0]
    factors = tuple(sorted({1, case.n_micro, mr, case.n_micro * mr}))  # how right answers scale the loss
    charged = {(r, k): Fraction(0) for r in range(P) for k in ("F", "B")}
    got = {(r, k): set() for r in range(P) for k in ("F", "B")}
    sent = {(r, k): set() for r in range(P) for k in ("F", "B")}
    replay = f"Replay: {case.replay(fn_name)}"
    for event in flow:
        r, what = event[0], event[1]
        if what in ("F", "B"):
            charged[r, what] += event[2] * mr
            had = len(got[r, what])
            needs = (r > 0) if what == "F" else (r < P - 1)
            if needs and min(charged[r, what], total) > had:
                side = f"activations from rank {r - 1}" if what == "F" else f"gradients from rank {r + 1}"
                pass_ = "forward" if what == "F" else "backward"
                return (
                    f"{case.label()}: rank {r}'s stage ran {pass_} on {float(charged[r, what]):g} row(s) while it had "
                    f"received {side} for only {had}: call the stage on the data you received, when you have it "
                    f"(a stage run on other data, with the real work done by hand, is not the pipeline's work). "
                    + replay
                )
        elif what == "got":
            src, t = event[2], event[3]
            if src == r - 1:
                got[r, "F"] |= _rows_found(t, acts[r])
            elif src == r + 1:
                got[r, "B"] |= _rows_found(t, grads[r + 1], factors)
        elif what == "put":
            dst, t = event[2], event[3]
            if dst == r + 1:
                kind, rows = "F", _rows_found(t, acts[r + 1])
            elif dst == r - 1:
                kind, rows = "B", _rows_found(t, grads[r], factors)
            else:
                continue
            sent[r, kind] |= rows
            if len(sent[r, kind]) > charged[r, kind]:
                what_ = "activations" if kind == "F" else "gradients"
                pass_ = "forward" if kind == "F" else "backward"
                return (
                    f"{case.label()}: rank {r} sent {what_} of {len(sent[r, kind])} row(s) to rank {dst} when its "
                    f"stage's {pass_} had run on only {float(charged[r, kind]):g}: send what the stage computed, "
                    f"after it computed it. " + replay
                )
    return None


# ---------------------------------------------------------------------------------------------
# tensor parallelism (Megatron MLP)
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TPCase:
    world_size: int
    lead: tuple[int, ...] = (3,)  # x's leading dims: x is (*lead, d_in)
    d_in: int = 4
    hidden: int = 8  # a multiple of world_size
    d_out: int = 3
    dtype: str = "float32"
    seed: int = 0
    policy: str = "stay"
    schedule_seed: int = 0
    key: int = 0  # the judge's hidden values (see _gen); never printed, never sent to a rank

    def __post_init__(self):
        object.__setattr__(self, "lead", tuple(self.lead))

    def label(self) -> str:
        return (
            f"W={self.world_size} ranks, x of shape {(*self.lead, self.d_in)}, hidden {self.hidden}, "
            f"d_out {self.d_out}, {self.dtype}"
        )

    def replay(self, fn_name: str = "tp_mlp") -> str:
        return _call(fn_name, "check_tp_case", self)

    @property
    def y_shape(self) -> tuple[int, ...]:
        return (*self.lead, self.d_out)


def make_mlp(case: TPCase, device: str = "cpu") -> dict:
    """x and the full W1, B1, W2, b2 of the case (b2 kept away from zero: outputs are O(1))."""
    g = _gen(case, 3)
    dt = DTYPES[case.dtype]
    r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)  # noqa: E731
    sign = torch.where(r(case.d_out) >= 0, 1.0, -1.0).double()
    full = {
        "x": r(*case.lead, case.d_in),
        "W1": r(case.d_in, case.hidden) / math.sqrt(case.d_in),
        "B1": r(case.hidden) * 0.5,
        "W2": r(case.hidden, case.d_out) * 0.5 / math.sqrt(case.hidden),
        "b2": sign * (1.0 + torch.rand(case.d_out, generator=g, dtype=torch.float64)),
    }
    return {k: v.to(device=device, dtype=dt) for k, v in full.items()}


def tp_shard(full: dict, case: TPCase, rank: int) -> tuple:
    """Rank ``rank``'s arguments: (x, w1, b1, w2, b2), each a fresh contiguous tensor."""
    c = case.hidden // case.world_size
    cols = slice(rank * c, (rank + 1) * c)
    return (
        full["x"].clone(),
        full["W1"][:, cols].contiguous(),
        full["B1"][cols].contiguous(),
        full["W2"][cols, :].contiguous(),
        full["b2"].clone(),
    )


def tp_reference(case: TPCase) -> torch.Tensor:
    """The unsharded MLP gelu(x @ W1 + B1) @ W2 + b2, computed in float64, in the case's dtype."""
    full = {k: v.double() for k, v in make_mlp(case).items()}
    y = F.gelu(full["x"] @ full["W1"] + full["B1"]) @ full["W2"] + full["b2"]
    return y.to(DTYPES[case.dtype])


def _tp_tolerance(dtype) -> dict:
    """float64 cases are held to float64: a sum in another order differs by ~1e-15, a float32
    intermediate by ~1e-7, which allclose's defaults would let pass."""
    return {"rtol": 1e-9, "atol": 1e-12} if dtype == torch.float64 else {}


def tp_verdict(case: TPCase, outputs: list, fn_name: str = "tp_mlp") -> str | None:
    """None when every rank returned y (x's dtype, allclose to the unsharded MLP); otherwise why."""
    want = tp_reference(case)
    full = {k: v.double() for k, v in make_mlp(case).items()}
    W = case.world_size
    replay = f"Replay: {case.replay(fn_name)}"
    for r, out in enumerate(outputs):
        head = f"{case.label()}: rank {r}"
        if not isinstance(out, torch.Tensor):
            kind = out if isinstance(out, str) else type(out).__name__
            return f"{head} returned {kind}, not a tensor: return the full y on every rank. {replay}"
        if tuple(out.shape) != case.y_shape:
            return (
                f"{head} returned a tensor of shape {tuple(out.shape)}; y = gelu(x @ W1 + B1) @ W2 + b2 has shape "
                f"{case.y_shape} (the full output on every rank, not this rank's shard). {replay}"
            )
        if out.dtype != want.dtype:
            return (
                f"{head} returned {str(out.dtype).replace('torch.', '')} for {case.dtype} inputs: keep x's dtype "
                f"(no float32 buffers: torch.zeros(..., dtype=x.dtype) or torch.empty_like). {replay}"
            )
        if torch.allclose(out, want, **_tp_tolerance(want.dtype)):
            continue
        if torch.allclose(out, want):  # right to float32's precision only
            return (
                f"{head} is right only to about 1e-7 of the float64 MLP (largest difference "
                f"{(out - want).abs().max().item():.1e}): part of it was computed in float32. Keep x's dtype for "
                f"every intermediate and buffer (no .float(), no float32 buffers). {replay}"
            )
        got = out.double()
        b2 = full["b2"]
        partial = want.double() - b2
        if W > 1 and torch.allclose(got, partial + W * b2, rtol=1e-4, atol=1e-6):
            why = (
                f"it is off by {W - 1}·b2: every rank added b2 before the all_reduce, so the sum holds it "
                f"{W} times. Add b2 after the reduction (or on one rank only)"
            )
        elif W > 1 and torch.allclose(got, partial / W + b2, rtol=1e-4, atol=1e-6):
            why = (
                f"its matmul part is 1/{W} of the right one: the partial products were averaged, not summed. "
                "Row-parallel partial sums must be added (all_reduce SUM)"
            )
        elif torch.allclose(got, partial, rtol=1e-4, atol=1e-6):
            why = "b2 is missing"
        else:
            bad = (~torch.isclose(out, want)).nonzero().tolist()
            i = tuple(bad[0]) if bad else ()
            why = (
                f"{len(bad)} of {want.numel()} elements are off (torch.allclose's default tolerances); the first at "
                f"{i}: {expected_got(f'{float(want[i]):.8g}', f'{float(out[i]):.8g}', bool(case.key))}. Split W1 by "
                f"columns (each rank its "
                "own hidden units, gelu on them), W2 by rows, and sum the partial outputs"
            )
        return f"{head}'s output differs from the unsharded MLP: {why}. {replay}"
    return None


def _calls_text(calls: list) -> str:
    parts = []
    for c in calls[:6]:
        extra = f", op {c.get('op')}" if c.get("op") not in (None, "SUM") else ""
        peer = f" with rank {c.get('peer')}" if c.get("peer") is not None else ""
        parts.append(f"{c.get('call')}({c.get('numel')} {c.get('dtype')} elements{peer}{extra})")
    more = f" and {len(calls) - 6} more" if len(calls) > 6 else ""
    return ", ".join(parts) + more if parts else "none"


def tp_traffic_problem(case: TPCase, logs: list, fn_name: str = "tp_mlp") -> str | None:
    """None when each rank made exactly one all_reduce (SUM) of y's size in x's dtype (or none at W=1)."""
    n = math.prod(case.y_shape)
    W = case.world_size
    for r, calls in enumerate(logs):
        calls = [c for c in calls if isinstance(c, dict)]
        good = (
            len(calls) == 1
            and calls[0].get("call") == "all_reduce"
            and calls[0].get("numel") == n
            and calls[0].get("op") == "SUM"
            and calls[0].get("dtype") == case.dtype
        )
        if good or (W == 1 and not calls):
            continue
        if any(c.get("call") == "all_reduce" and c.get("op") == "AVG" for c in calls):
            note = "an all_reduce with op AVG averages the partial outputs: they must be summed"
        elif any(c.get("call") in ("send", "recv", "isend", "irecv") for c in calls):
            note = "point-to-point messages are not needed: each rank's partial output is summed by one all_reduce"
        elif any(c.get("call") == "all_gather_into_tensor" for c in calls):
            note = (
                "gathering activations is not needed: with W1 split by columns and W2 by rows, each rank's "
                "partial output is already y's size; one all_reduce sums them"
            )
        elif len(calls) > 1:
            note = "one all_reduce of y's size is all the forward pass needs"
        elif calls and calls[0].get("dtype") != case.dtype:
            note = f"the buffer is {calls[0].get('dtype')}: reduce in x's dtype ({case.dtype})"
        else:
            note = f"all_reduce the partial output y_r itself ({n} elements)"
        return (
            f"communication: {case.label()}: rank {r} made {len(calls)} comm call{'s' if len(calls) != 1 else ''}: "
            f"{_calls_text(calls)}; the Megatron MLP needs exactly one comm.all_reduce of y's size ({n} elements, "
            f"{case.dtype}, SUM) per forward. {note}. Replay: {case.replay(fn_name)}"
        )
    return None


# ---------------------------------------------------------------------------------------------
# ZeRO-1 (Adam with sharded optimizer state)
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ZeroCase:
    world_size: int
    shapes: tuple = ((3, 4), (4,), (2,))  # the parameters' shapes
    dtype: str = "float64"
    steps: int = 3
    lr: float = 1e-2
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    grad_scale: float = 1.0  # 1e-6: tiny gradients, where the mean and eps matter
    seed: int = 0
    policy: str = "stay"
    schedule_seed: int = 0
    key: int = 0  # the judge's hidden values (see _gen); never printed, never sent to a rank

    def __post_init__(self):
        object.__setattr__(self, "shapes", tuple(tuple(s) for s in self.shapes))
        object.__setattr__(self, "betas", tuple(self.betas))

    @property
    def numel(self) -> int:
        return sum(math.prod(s) for s in self.shapes)

    @property
    def shard(self) -> int:
        return -(-self.numel // self.world_size)

    def label(self) -> str:
        return (
            f"W={self.world_size} ranks, {len(self.shapes)} parameters of shapes {list(self.shapes)} "
            f"(N={self.numel}), {self.dtype}, {self.steps} steps, lr={self.lr:g}, betas={self.betas}, "
            f"eps={self.eps:g}" + (f", gradients ~{self.grad_scale:g}" if self.grad_scale != 1.0 else "")
        )

    def replay(self, fn_name: str = "ZeroAdam") -> str:
        return _call(fn_name, "check_zero_case", self)

    def tolerance(self) -> float:
        return 1e-10 if self.dtype == "float64" else 1e-6


def make_params(case: ZeroCase, device: str = "cpu") -> list[torch.Tensor]:
    g = _gen(case, 4)
    return [
        torch.randn(s, generator=g, dtype=torch.float64).to(device=device, dtype=DTYPES[case.dtype])
        for s in case.shapes
    ]


def make_grads(case: ZeroCase, step: int, rank: int, device: str = "cpu") -> list[torch.Tensor]:
    """Rank ``rank``'s own gradients at ``step`` (different on every rank)."""
    g = _gen(case, 1000 + 97 * step + rank)
    return [
        (torch.randn(s, generator=g, dtype=torch.float64) * case.grad_scale).to(device=device, dtype=DTYPES[case.dtype])
        for s in case.shapes
    ]


def adam_reference(case: ZeroCase, variant: str = "") -> list[torch.Tensor]:
    """The parameters after each step (flat, concatenated) of DDP + Adam: gradients averaged over the
    ranks (summed in rank order, divided by W), then ``torch.optim.Adam`` with the case's
    hyper-parameters. ``variant`` computes a known mistake instead, by hand: "sum" (no division),
    "eps_in_sqrt", "no_bias_correction", "own" (shard r updated with rank r's own gradient)."""
    W, N, c = case.world_size, case.numel, case.shard
    sizes = [math.prod(s) for s in case.shapes]
    params = [torch.nn.Parameter(t.clone()) for t in make_params(case)]
    if not variant:
        opt = torch.optim.Adam(params, lr=case.lr, betas=case.betas, eps=case.eps, foreach=False)
    flat_p = torch.cat([p.detach().reshape(-1) for p in params])
    m, v = torch.zeros_like(flat_p), torch.zeros_like(flat_p)
    b1, b2 = case.betas
    out = []
    for step in range(case.steps):
        grads = [torch.cat([g.reshape(-1) for g in make_grads(case, step, r)]) for r in range(W)]
        total = grads[0].clone()
        for r in range(1, W):
            total += grads[r]
        if not variant:
            for p, g in zip(params, (total / W).split(sizes)):
                p.grad = g.view_as(p).clone()
            opt.step()
            out.append(torch.cat([p.detach().reshape(-1).clone() for p in params]))
            continue
        if variant == "sum":
            g = total
        elif variant == "own":
            owner = torch.clamp(torch.arange(N) // max(c, 1), max=W - 1)
            g = torch.stack(grads)[owner, torch.arange(N)]
        else:
            g = total / W
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        t = step + 1
        c1, c2 = (1.0, 1.0) if variant == "no_bias_correction" else (1 - b1**t, 1 - b2**t)
        denom = (v / c2 + case.eps).sqrt() if variant == "eps_in_sqrt" else (v / c2).sqrt() + case.eps
        flat_p = flat_p - case.lr * (m / c1) / denom
        out.append(flat_p.clone())
    return out


ZERO_DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8}  # ZeroAdam's signature (CONTRACT 8.5)

VARIANTS = {
    "sum": "the gradients were summed, not averaged: divide the reduce-scattered shard by world_size",
    "eps_in_sqrt": "eps is inside the square root: Adam divides by sqrt(v̂) + eps",
    "no_bias_correction": "no bias correction: divide m by 1 − β1^t and v by 1 − β2^t (t = 1, 2, ...)",
    "own": (
        "each rank updated its shard with its own gradient: reduce-scatter the flat gradients first, so that "
        "every shard is updated with the mean over the ranks"
    ),
}


def zero_verdict(case: ZeroCase, per_rank: list, fn_name: str = "ZeroAdam", ref: list | None = None) -> str | None:
    """None when every rank's parameters follow DDP + Adam at every step; otherwise why.

    ``per_rank``: for each rank, the list of its flat parameters after each step."""
    ref = ref if ref is not None else adam_reference(case)
    tol = case.tolerance()
    replay = f"Replay: {case.replay(fn_name)}"
    for r, steps in enumerate(per_rank):
        if not isinstance(steps, list) or len(steps) != case.steps:
            return f"{case.label()}: rank {r}'s report came back malformed"
        for s, (got, want) in enumerate(zip(steps, ref)):
            if not isinstance(got, torch.Tensor) or got.numel() != want.numel():
                return f"{case.label()}: rank {r}'s parameters came back malformed after step {s + 1}"
            got = got.reshape(-1)
            if got.dtype != want.dtype:
                return f"{case.label()}: rank {r}'s parameters became {got.dtype} ({case.dtype} expected). {replay}"
            diff = (got.double() - want.double()).abs()
            if float(diff.max()) <= tol:
                continue
            why = ""
            for name, text in VARIANTS.items():
                other = adam_reference(case, name)[s]
                if float((other.double() - want.double()).abs().max()) <= tol:
                    continue  # the same as the right answer on this case (a sum at W = 1)
                if float((got.double() - other.double()).abs().max()) <= max(tol, 1e-12) * 10:
                    why = text
                    break
            if not why:
                init = torch.cat([t.reshape(-1) for t in make_params(case)]).double()
                still = (got.double() == init) & (want.double() != init)
                if bool(still.any()):
                    idx = still.nonzero().flatten().tolist()
                    why = (
                        f"{len(idx)} element{'s' if len(idx) != 1 else ''} never changed (flat indices "
                        f"{idx[:6]}{'...' if len(idx) > 6 else ''} of {case.numel}): with N={case.numel} not a "
                        f"multiple of W={case.world_size}, pad to W·⌈N/W⌉ = {case.world_size * case.shard} so every "
                        f"element has a shard, and copy all N back"
                    )
                else:
                    k = int(diff.argmax())
                    why = (
                        f"the largest difference is {float(diff.max()):.3g} at flat index {k} ("
                        f"{expected_got(f'{float(want[k]):.12g}', f'{float(got[k]):.12g}', bool(case.key))}; "
                        f"allowed {tol:g})"
                    )
                    if case.dtype == "float64" and float(diff.max()) < 1e-5:
                        why += "; a float32 buffer for float64 parameters loses that much: keep the parameters' dtype"
                    hyper = {"lr": case.lr, "betas": tuple(case.betas), "eps": case.eps}
                    if hyper == ZERO_DEFAULTS:
                        why += (
                            f"; this case builds {fn_name}(params, comm) with its signature's defaults, which must "
                            "be the contract's: lr=1e-3, betas=(0.9, 0.999), eps=1e-8"
                        )
            return (
                f"{case.label()}: rank {r}'s parameters after step {s + 1} differ from DDP (averaged gradients) + "
                f"torch.optim.Adam: {why}. {replay}"
            )
    return None


STATE_NUMBERS = 256  # elements a state may hold besides its tensors (torch.optim.Adam's own state_dict() takes 74)


def state_elements(state, elsize: int) -> int:
    """How much a ``state_dict()`` holds, in elements of the parameters' size: a tensor or array counts
    its bytes, a number its 8 bytes (a big int all of its bytes), text and bytes their bytes, and
    every node at least one element: None, a bool and each container too, with its keys and items.
    What crosses between steps is plain data, so this bounds what it can carry whatever its shape
    (full moments as a list of bools, or as a pattern of None and [], cost more than they hold)."""
    total, todo = 0, [state]
    while todo:  # a stack, not recursion: no depth a state can nest to ends the count
        x = todo.pop()
        if isinstance(x, torch.Tensor):
            nbytes = x.numel() * x.element_size()
        elif hasattr(x, "nbytes") and hasattr(x, "dtype"):  # a numpy array
            nbytes = int(x.nbytes)
        elif type(x) is int:
            nbytes = max(8, (x.bit_length() + 8) // 8)
        elif type(x) in (float, complex):
            nbytes = 8 if type(x) is float else 16
        elif type(x) in (str, bytes):
            nbytes = len(x.encode() if type(x) is str else x)
        elif type(x) is dict:
            nbytes = 0
            todo.extend(x.keys())
            todo.extend(x.values())
        elif type(x) in (list, tuple, set, frozenset):
            nbytes = 0
            todo.extend(x)
        else:  # None, a bool
            nbytes = 0
        total += max(1, -(-nbytes // elsize))
    return total


def zero_state_problem(case: ZeroCase, seen: dict, fn_name: str = "ZeroAdam") -> str | None:
    """None when every rank's ``state_numel()`` is at most 2·⌈N/W⌉ and what its ``state_dict()`` carried
    between steps (``seen["held"]``, :func:`state_elements`) is at most 4·⌈N/W⌉ elements and
    ``STATE_NUMBERS`` numbers; otherwise why."""
    bound = 2 * case.shard
    replay = f"Replay: {case.replay(fn_name)}"
    for r, (n, held) in enumerate(zip(seen.get("state_numel", []), seen.get("held", []))):
        if not (isinstance(n, int) and not isinstance(n, bool)):
            return f"{case.label()}: rank {r}'s state_numel() returned {n!r}, not an int. {replay}"
        if n > bound:
            return (
                f"{case.label()}: rank {r} keeps {n} elements of optimizer state (state_numel()); ZeRO-1 keeps "
                f"exp_avg and exp_avg_sq for its own shard only: at most 2·⌈N/W⌉ = 2·{case.shard} = {bound}. "
                f"{replay}"
            )
        if n <= 0 and case.numel > 0:
            return f"{case.label()}: rank {r}'s state_numel() is {n}: count exp_avg and exp_avg_sq. {replay}"
        # exp_avg, exp_avg_sq, a master copy of the shard and a gradient buffer of the shard: 4·c
        if isinstance(held, int) and held > 4 * case.shard + STATE_NUMBERS and case.world_size > 1:
            return (
                f"{case.label()}: rank {r}'s state_dict() carries {held} elements from one step to the next "
                "(tensors of any dtype, numbers, text and bytes count by their size, every None, bool and "
                "container at least one); besides exp_avg and "
                f"exp_avg_sq of its shard (2·{case.shard}) it may keep its own shard of the parameters and of "
                f"the gradient ({case.shard} each) and a few numbers such as the step count, nothing of size "
                f"N={case.numel}. {replay}"
            )
    return None


def zero_dataflow_problem(case: ZeroCase, flow: list, fn_name: str = "ZeroAdam") -> str | None:
    """None when each rank's all_gather_into_tensor of step s sends its own shard of the updated
    parameters (DDP + Adam after step s + 1, the padding aside): what ZeRO-1 gathers. ``flow``: a
    relayed world's record of each rank's collective inputs (procgroup.SimWorld.flow), kept by the
    judge as the broker. A rank that gathers anything else (the averaged gradient, to run Adam on all
    N parameters with the full state kept where no walk of its objects looks: a file, a module
    object, a ContextVar, the comm...) fails here whatever it holds: no walk of objects can look
    everywhere, the data flow can."""
    W, c, n = case.world_size, case.shard, case.numel
    if W == 1:
        return None
    ref = adam_reference(case)
    tol = case.tolerance()
    replay = f"Replay: {case.replay(fn_name)}"
    for r in range(W):
        gathered = [e[2] for e in flow if e[0] == r and e[1] == "all_gather_into_tensor"]
        lo, hi = r * c, min((r + 1) * c, n)
        for s, t in enumerate(gathered[: case.steps]):
            want = ref[s].reshape(-1)[lo:hi].double()
            got = t.reshape(-1)[: hi - lo].double() if t.numel() >= hi - lo else None
            if got is None or (hi > lo and float((got - want).abs().max()) > tol):
                return (
                    f"{case.label()}: at step {s + 1} rank {r} all-gathered values that are not its shard of the "
                    f"updated parameters (elements {lo}..{hi - 1} after the step): ZeRO-1 runs Adam on its own "
                    f"shard only and all-gathers the updated parameter shard, not the gradients (gathering those "
                    f"to run Adam on all N parameters keeps the full optimizer state on every rank). {replay}"
                )
    return None


def zero_traffic_problem(case: ZeroCase, logs: list, fn_name: str = "ZeroAdam") -> str | None:
    """None when each step is one reduce_scatter_tensor and one all_gather_into_tensor of ⌈N/W⌉-element
    shards in the parameters' dtype (or no communication at all at W=1)."""
    c, W = case.shard, case.world_size
    want = ["reduce_scatter_tensor", "all_gather_into_tensor"] * case.steps
    for r, calls in enumerate(logs):
        calls = [x for x in calls if isinstance(x, dict)]
        names = [x.get("call") for x in calls]
        if W == 1 and not calls:
            continue
        ok = names == want and all(x.get("numel") == c and x.get("dtype") == case.dtype for x in calls)
        if ok:
            continue
        if "all_reduce" in names:
            note = (
                "an all_reduce gives every rank the whole averaged gradient, but a rank updates only its shard: "
                "reduce-scatter the flat gradients instead (half the traffic), then all-gather the updated shards"
            )
        elif any(n in ("send", "recv", "isend", "irecv") for n in names):
            note = "use the two collectives, not point-to-point messages"
        elif calls and any(x.get("dtype") != case.dtype for x in calls):
            note = f"a buffer of another dtype: keep the parameters' dtype ({case.dtype})"
        elif calls and any(x.get("numel") != c for x in calls):
            note = f"each shard has ⌈N/W⌉ = ⌈{case.numel}/{W}⌉ = {c} elements (pad the flat buffer to W·{c})"
        else:
            note = (
                "per step: one reduce_scatter_tensor of the flat padded gradients, one all_gather_into_tensor "
                "of the updated shards"
            )
        return (
            f"communication: {case.label()}: rank {r} made {len(calls)} comm calls over {case.steps} steps: "
            f"{_calls_text(calls)}; expected per step exactly one reduce_scatter_tensor and one "
            f"all_gather_into_tensor of {c}-element shards ({case.dtype}). {note}. Replay: {case.replay(fn_name)}"
        )
    return None


# ---------------------------------------------------------------------------------------------
# one rank's inputs, as the judge hands them to a rank of a relayed world
# ---------------------------------------------------------------------------------------------
def rank_inputs(case, rank: int) -> dict:
    """What rank ``rank`` of ``case`` is given and nothing more (plain tensors, for the wire): its
    stage's weights, biases and pre-filled grads (and the batch on rank 0, the target on the last
    rank); its shard of the MLP; the shared initial parameters and its own gradients of every step.
    The judge sends these to a relayed rank with the case's ``key`` and ``seed`` cleared, so that a
    rank cannot rebuild another rank's inputs and skip the communication the exercise is about."""
    if isinstance(case, PipeCase):
        stage = make_stages(case)[rank]
        batch, target = make_batch(case)
        return {
            "weight": stage.linear.weight.detach().clone(),
            "bias": stage.linear.bias.detach().clone(),
            "grads": [p.grad.clone() for p in stage.parameters()] if case.grad_init else None,
            "batch": batch if rank == 0 else None,
            "target": target if rank == case.stages - 1 else None,
        }
    if isinstance(case, TPCase):
        return {"args": list(tp_shard(make_mlp(case), case, rank))}
    return {"params": make_params(case), "grads": [make_grads(case, s, rank) for s in range(case.steps)]}
