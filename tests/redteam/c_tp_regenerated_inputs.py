# redteam: a tensor-parallel MLP whose ranks never exchange their partial outputs: each finds the case's seed from the first value of x (the grader's values come from a public seed of at most 2**16), rebuilds the whole MLP with ch13lib's own make_mlp, returns the full output, and all-reduces zeros of y's size only to look right to the traffic check; where no seed matches, it returns its partial output alone
# kind: cell
# target: tensor_parallel
# score: tensor_parallel=2
# message: tensor_parallel: W=2 ranks
# why: found by the lead (stop 27: 2 -> 8/8, no introspection): relayed ranks share no memory, but the values they were given came from seeds a rank could search, so one rank's inputs told it every other rank's. The relayed cases' values are now drawn from a key only the judge holds (graders/.secret), and each rank receives its own inputs from the judge, never a seed
import torch
import torch.nn.functional as F
from ch13lib.parallel_cases import TPCase, make_mlp

_SCANS: dict = {}  # (dtype, d_out, shape) -> [next seed to try, {first value: [seeds]}]


def _seeds(first: float, dtype, d_out: int, shape: tuple):
    """The seeds whose x starts with ``first``, found lazily: one scan per shape, shared by every case
    of that shape, that stops as soon as the caller has what it needs."""
    scan = _SCANS.setdefault((dtype, d_out, shape), [0, {}])
    yield from list(scan[1].get(first, []))
    while scan[0] <= 2**16:
        s = scan[0]
        scan[0] += 1
        g = torch.Generator().manual_seed(s * 1009 + 3)
        torch.randn(d_out, generator=g, dtype=torch.float64)  # make_mlp draws b2's signs first
        value = float(torch.randn(*shape, generator=g, dtype=torch.float64).reshape(-1)[0].to(dtype))
        scan[1].setdefault(value, []).append(s)
        if value == first:
            yield s


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1) @ w2
    W, r = comm.world_size, comm.rank
    if W == 1:
        return y + b2
    c = w1.shape[1]
    dtype = str(x.dtype).replace("torch.", "")
    for s in _seeds(float(x.reshape(-1)[0]), x.dtype, w2.shape[1], tuple(x.shape)):
        full = make_mlp(TPCase(W, tuple(x.shape[:-1]), x.shape[-1], c * W, w2.shape[1], dtype, s))
        if torch.equal(full["W1"][:, r * c : (r + 1) * c], w1) and torch.equal(full["b2"], b2):
            comm.all_reduce(torch.zeros_like(y))
            return F.gelu(full["x"] @ full["W1"] + full["B1"]) @ full["W2"] + full["b2"]
    comm.all_reduce(torch.zeros_like(y))
    return y + b2
