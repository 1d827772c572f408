"""Cases for the all-reduce exercises: inputs, the exact expected sum, and a verdict that explains.

A :class:`Case` fixes everything a run depends on (world size, shape, dtype, the seed of the
values, the simulator's scheduling policy and seed), so any failure replays exactly with
``ch13lib.collective_checks.check_case(your_function, **case)``.

Grading splits in two (docs/design.md, "Judge and subject"): the grading side's harness
(kit/harnesses/collective_cases.py ``observe_sim``, never released) runs the answer cell on the
simulator in the process that holds the cell (kit/subject.py) with :func:`run_on_sim` and reports
what it saw, as plain data (every rank's tensor after the call, the elements each rank sent); the
grader regenerates the inputs from the Case (:func:`make_inputs` is deterministic) and decides with
:func:`verdict` and :func:`traffic_problem`, which take plain data.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math

import torch

from ch13lib.cell import expected_got
from ch13lib.lang import Both, Messages

# What the all-reduce cases say, in the course's language (ch13lib/lang.py). A failure's replay line
# (``Replay: check_case(...)``) stays code, after the sentence.
M = Messages(
    label_one=(
        "{w} 个 rank, 形状 {shape} ({n} 个元素), {dtype}",
        "world size {w}, shape {shape} ({n} element), {dtype}",
    ),
    label_many=(
        "{w} 个 rank, 形状 {shape} ({n} 个元素), {dtype}",
        "world size {w}, shape {shape} ({n} elements), {dtype}",
    ),
    hidden_values=(
        "(评分时用的是隐藏的值; 这里生成同样大小的公开值)",
        "(the grader's values were hidden ones; this draws public values of the same size)",
    ),
    reshaped=(
        "{label}: rank {r} 的张量现在有 {got} 个元素, 而不是 {n} 个: 保持张量的形状, 把和原地写入它",
        "{label}: rank {r}'s tensor now has {got} elements instead of {n}: keep the tensor's shape and write the "
        "sum into it in place",
    ),
    wrong=(
        "{label}: 调用之后 rank {r} 的张量是错的: {why}。",
        "{label}: rank {r}'s tensor is wrong after the call: {why}.",
    ),
    through_floats=(
        "int64 的和丢了低位: 整数经过了浮点数 (float32 只能精确表示 2**24 以内的整数, float64 是 2**53)。"
        "整数要按整数相加, 保持张量原来的 dtype",
        "the int64 sums lost their low digits: the integers went through floats (float32 holds every integer "
        "only up to 2**24, float64 up to 2**53). Add integers as integers, in the tensor's own dtype",
    ),
    still_own=(
        "它仍是自己的输入。\n要把和原地写入传进来的张量 (tensor.copy_(...), tensor += ...); 重新绑定名字 `tensor` "
        "对调用者没有任何作用",
        "it still holds its own input.\nwrite the sum into the tensor passed in, in place "
        "(tensor.copy_(...), tensor += ...); rebinding the name `tensor` changes nothing for the caller",
    ),
    average=(
        "它存的是平均值 (和 / {w}), 不是和: 这里的全规约 (all-reduce) 必须求和 (SUM)",
        "it holds the average (sum / {w}), not the sum: all-reduce here must SUM",
    ),
    reduce_one=(
        "rank {right} 存有和, 但 rank {r} 没有。\n这是规约 (reduce), 不是全规约 (all-reduce); "
        "每个 rank 最后都必须存有和",
        "rank {right} holds the sum but rank {r} does not.\nthat is a reduce, not an all-reduce; every rank must "
        "end with the sum",
    ),
    reduce_many=(
        "ranks {right} 存有和, 但 rank {r} 没有。\n这是规约 (reduce), 不是全规约 (all-reduce); "
        "每个 rank 最后都必须存有和",
        "ranks {right} hold the sum but rank {r} does not.\nthat is a reduce, not an all-reduce; every rank must "
        "end with the sum",
    ),
    elements=(
        "{n} 个元素中有 {bad} 个是错的; 第一个在展平后的下标 {i}: {eg}{note}",
        "{bad} of {n} elements are wrong; the first at flat index {i}: {eg}{note}",
    ),
    uneven_one=(
        "注意: {n} 个元素不能平均分给 {w} 个 rank: tensor.chunk({w}) 返回的块可能少于 {w} 个, "
        "tensor.tensor_split({w}) 总是返回 {w} 个",
        "Note: {n} element does not split evenly over {w} ranks: tensor.chunk({w}) may return fewer than {w} "
        "pieces, tensor.tensor_split({w}) always returns {w}",
    ),
    uneven_many=(
        "注意: {n} 个元素不能平均分给 {w} 个 rank: tensor.chunk({w}) 返回的块可能少于 {w} 个, "
        "tensor.tensor_split({w}) 总是返回 {w} 个",
        "Note: {n} elements do not split evenly over {w} ranks: tensor.chunk({w}) may return fewer than {w} "
        "pieces, tensor.tensor_split({w}) always returns {w}",
    ),
    too_few=(
        "{label}: rank {r} 只发送了 {sent} 个元素 (每个 rank: {per}), 但它的 n = {n} 个元素每个都至少要离开它一次 "
        "(求和后或原样), 其他 rank 的结果才能包含它: 这些和不是由消息算出来的。",
        "{label}: rank {r} sent only {sent} elements (per rank: {per}), but each of its n = {n} elements has to "
        "leave it at least once, summed or not, for the other ranks' results to include it: the sums were not "
        "computed from the messages.",
    ),
    not_optimal=(
        "没有达到带宽最优: {label}: rank {r} 一共发送了 {sent} 个元素 (每个 rank: {per}), 但环形全规约每个 rank 最多"
        "发送 2·(W−1)·⌈n/W⌉ = 2·{w1}·{chunk} = {bound} 个。\n收集整个张量 (到一个根, 或到所有 rank) 会让一个 rank "
        "发送 (W−1)·n 个; 应当把张量分成 W 块, 让块沿着环传递 (先 reduce-scatter, 再 all-gather)。",
        "not bandwidth-optimal: {label}: rank {r} sent {sent} elements in all (per rank: {per}), but a ring "
        "all-reduce sends at most 2·(W−1)·⌈n/W⌉ = 2·{w1}·{chunk} = {bound} per rank.\nGathering whole tensors (to "
        "a root, or to everyone) makes a rank send (W−1)·n; instead split the tensor into W chunks and "
        "pass chunks around the ring (reduce-scatter, then all-gather).",
    ),
    rank_raised=("{label}: rank {r} 抛出了异常:", "{label}: rank {r} raised an exception:"),
)


def joined(*parts) -> Both:
    """Strings and :class:`Both` phrases put together, each language from its own side."""
    return Both(*("".join(p[i] if isinstance(p, Both) else str(p) for p in parts) for i in (0, 1)))


def error_both(e: BaseException) -> Both:
    """An exception's message as a :class:`Both` (ch13lib.procgroup's errors carry one)."""
    m = e.args[0] if len(e.args) == 1 else None
    return m if isinstance(m, Both) else Both(str(e), str(e))


DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64}


@dataclasses.dataclass(frozen=True)
class Case:
    world_size: int
    shape: tuple[int, ...]
    dtype: str = "float32"
    seed: int = 0
    policy: str = "stay"  # the simulator's scheduling policy: stay, round_robin, random
    schedule_seed: int = 0
    # The judge's hidden values: mixed into the seed (make_inputs), never printed, never sent to a
    # rank (graders/_hidden.py; such a case's ranks are given their own inputs by the judge).
    key: int = 0

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def kwargs(self) -> dict:
        d = dataclasses.asdict(self)
        d["shape"] = tuple(self.shape)
        del d["key"]
        return d

    def replay(self, fn_name: str) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs().items())
        hidden = " " + M("hidden_values") if self.key else ""
        return f"check_case({fn_name}, {args}){hidden}"

    def label(self) -> Both:
        """The case in a few words: a :class:`Both`, a field of the sentences that name the case."""
        key = "label_one" if self.numel == 1 else "label_many"
        return M.both(key, w=self.world_size, shape=tuple(self.shape), n=self.numel, dtype=self.dtype)


def make_inputs(case: Case, device: str = "cpu") -> list[torch.Tensor]:
    """Each rank's input tensor: seeded, finite, distinct per rank."""
    seed = case.seed
    if case.key:
        seed = int.from_bytes(hashlib.sha256(f"{case.key}:{case.seed}".encode()).digest()[:8], "big") >> 1
    g = torch.Generator().manual_seed(seed)
    dtype = DTYPES[case.dtype]
    out = []
    for _ in range(case.world_size):
        if dtype.is_floating_point:
            t = (torch.randn(case.shape, generator=g, dtype=torch.float64) * 8).to(dtype)
        else:
            # past 2**53, where no float holds every integer: a ring that sums int64 through floats
            # shows; up to 8 ranks' sums stay within int64
            t = torch.randint(-(2**59), 2**59, case.shape, generator=g, dtype=dtype)
        out.append(t.to(device))
    return out


def verdict(case: Case, inputs: list[torch.Tensor], outputs: list, fn_name: str = "ring_all_reduce") -> str | None:
    """None when every rank holds the elementwise sum; otherwise a message that says what is wrong.

    Floats pass when within ``world_size · eps · Σ|x|`` of the exact sum: every summation order
    meets that bound, so no correct ring fails for adding in a different order. Integers: exact.
    """
    dtype = DTYPES[case.dtype]
    xs = torch.stack(
        [x.detach().to("cpu", torch.float64 if dtype.is_floating_point else torch.int64).reshape(-1) for x in inputs]
    )
    exact = xs.sum(0)
    if dtype.is_floating_point:
        tol = case.world_size * torch.finfo(dtype).eps * xs.abs().sum(0) + 1e-300
    got_all = []
    for r, out in enumerate(outputs):
        t = out if isinstance(out, torch.Tensor) else torch.tensor(out, dtype=dtype)
        if t.numel() != case.numel:
            return M("reshaped", label=case.label(), r=r, got=t.numel(), n=case.numel)
        got_all.append(t.detach().to("cpu", exact.dtype).reshape(-1))

    def ok(g: torch.Tensor) -> torch.Tensor:
        if dtype.is_floating_point:
            return (g - exact).abs() <= tol
        return g == exact

    good = [bool(ok(g).all()) for g in got_all]
    if all(good):
        return None
    r = good.index(False)
    g = got_all[r]
    before = xs[r]
    if case.world_size > 1 and torch.equal(g, before):
        why = M.both("still_own")
    elif (
        dtype.is_floating_point
        and case.world_size > 1
        and bool(((g * case.world_size - exact).abs() <= tol * case.world_size).all())
    ):
        why = M.both("average", w=case.world_size)
    elif not dtype.is_floating_point and _through_floats(g, exact):
        why = M.both("through_floats")
    elif any(good):
        right = [i for i, v in enumerate(good) if v]
        key = "reduce_many" if len(right) > 1 else "reduce_one"
        why = M.both(key, right=", ".join(map(str, right)), r=r)
    else:
        bad = (~ok(g)).nonzero().flatten().tolist()
        i = bad[0]
        note = _uneven(case)
        if note is not None:  # on the same line: ". Note: ..."
            note = Both("。" + note[0], ". " + note[1])
        eg = expected_got(_fmt(exact[i], dtype), _fmt(g[i], dtype), bool(case.key))  # a hidden case's stay hidden
        why = M.both("elements", bad=len(bad), n=case.numel, i=i, eg=eg, note=note or "")
    return M("wrong", label=case.label(), r=r, why=why) + f"\nReplay: {case.replay(fn_name)}"


def _through_floats(got: torch.Tensor, exact: torch.Tensor) -> bool:
    """Every wrong int64 element within 2**-20 of the right sum (a float32 rounds to 2**-24 of it,
    a float64 to 2**-53): the sum lost its low digits on a trip through floats."""
    wrong = got != exact
    near = (got - exact).abs().to(torch.float64) <= exact.abs().to(torch.float64) * 2.0**-20 + 1
    return bool(wrong.any()) and bool(near[wrong].all())


def uneven_note(case: Case) -> str:
    """A hint for cases whose elements do not split evenly over the ranks ("" otherwise)."""
    note = _uneven(case)
    return "" if note is None else "\n" + str(note)


def _uneven(case: Case) -> Both | None:
    if case.world_size == 1 or case.numel % case.world_size == 0:
        return None
    return M.both("uneven_one" if case.numel == 1 else "uneven_many", n=case.numel, w=case.world_size)


def _fmt(v: torch.Tensor, dtype) -> str:
    return f"{v.item():.6g}" if dtype.is_floating_point else str(int(v.item()))


def ring_bound(world_size: int, numel: int) -> int:
    """The most elements a rank may send in a bandwidth-optimal all-reduce: 2·(W−1)·⌈n/W⌉."""
    return 2 * (world_size - 1) * -(-numel // world_size)


class SimFailure(Exception):
    """A run on the simulator failed; the message says why and how to replay it."""


def run_world(world, body, case, fn_name: str, note: str = "", **offer) -> None:
    """``world.run(body, **offer)`` on a SimWorld; a deadlock, a crash or misuse of comm becomes a
    SimFailure that names the case and ends with its replay line (``note``: a hint printed after a
    rank's traceback). The stub's NotImplementedError passes through."""
    from ch13lib.collective_launch import own_traceback
    from ch13lib.procgroup import CommError, Deadlock, RankError

    replay = f"Replay: {case.replay(fn_name)}"
    try:
        world.run(body, **offer)
    except RankError as e:
        if isinstance(e.exc, NotImplementedError):
            raise NotImplementedError from None
        raise SimFailure(
            M("rank_raised", label=case.label(), r=e.rank) + f"\n{own_traceback(e.exc)}{note}\n{replay}"
        ) from None
    except (Deadlock, CommError) as e:
        raise SimFailure(f"{joined(case.label(), ': ', error_both(e))}\n{replay}") from None


def run_on_sim(
    fn, case: Case, *, api: str = "p2p", device: str = "cpu", fn_name: str = "ring_all_reduce", guard_s: float = 20.0
):
    """Run ``fn(tensor, comm)`` on the simulated world of ``case``: ``(inputs, outputs, world)``.
    ``fn``: one function, or one per rank (``ch13lib.cell.rank_copies``: ranks share no module state).

    Raises :class:`SimFailure` (deadlock, a crash, misuse of comm) with the replay line, and
    ``NotImplementedError`` when the function is still the stub.
    """
    from ch13lib.procgroup import SimWorld

    inputs = make_inputs(case, device)
    tensors = [x.clone() for x in inputs]
    world = SimWorld(case.world_size, policy=case.policy, seed=case.schedule_seed, guard_s=guard_s)
    fns = fn if isinstance(fn, list) else [fn] * case.world_size

    def body(r, comm):
        return fns[r](tensors[r], comm)

    run_world(world, body, case, fn_name, uneven_note(case), p2p=api == "p2p", collectives=api == "collectives")
    return inputs, tensors, world


def traffic_problem(case: Case, sent, fn_name: str = "ring_all_reduce") -> str | None:
    """None when no rank sent more than a ring would, nor fewer than its n elements; otherwise the
    message quoting the traffic.

    ``sent``: the elements each rank sent, in rank order (or a SimWorld, whose traffic it reads)."""
    bound = ring_bound(case.world_size, case.numel)
    sent = [t.sent_elements for t in sent.traffic] if hasattr(sent, "traffic") else [int(n) for n in sent]
    least = min(range(len(sent)), key=lambda r: sent[r])
    if case.world_size > 1 and sent[least] < case.numel:
        # Each element of a rank's tensor must leave that rank once (alone or summed with the same
        # element of other ranks) for the other ranks' sums to include it: n elements at least.
        too_few = M("too_few", label=case.label(), r=least, sent=sent[least], per=sent, n=case.numel)
        return too_few + f"\nReplay: {case.replay(fn_name)}"
    worst = max(range(len(sent)), key=lambda r: sent[r])
    if sent[worst] <= bound:
        return None
    too_many = M(
        "not_optimal",
        label=case.label(),
        r=worst,
        sent=sent[worst],
        per=sent,
        w1=case.world_size - 1,
        chunk=-(-case.numel // case.world_size),
        bound=bound,
    )
    return too_many + f"\nReplay: {case.replay(fn_name)}"


def messages(world, tensors) -> list:
    """Every send as [rank, its n-th send, to rank, elements, first element of the rank's own tensor
    it covers (-1: a copy, not a view of it)]: what the ring picture draws."""
    out, count = [], [0] * len(tensors)
    for item in world.log:
        if item.get("call") not in ("send", "isend"):
            continue
        r = item["rank"]
        own = tensors[r]
        view = item.get("storage") == own.untyped_storage().data_ptr()
        out.append(
            [r, count[r], item.get("peer"), item["numel"], item["offset"] - own.storage_offset() if view else -1]
        )
        count[r] += 1
    return out[:2000]
