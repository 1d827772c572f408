# redteam: a ZeRO-1 step with exactly the contract's traffic that keeps a full torch.optim.Adam over all N parameters in an attribute (2N elements of state on every rank) and reports state_numel() as 2·ceil(N/W)
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: nothing of size N
# why: found by the seventh red-team helper (stop 27: 6 -> 10/10, no flag): the walk of what the optimizer holds went into dicts, lists and tuples only, so an inner object's state (an Adam's .state) was not seen. It now walks the attributes of the objects it finds too (the comm excepted; a 0-d step counter per parameter is bookkeeping)
import torch


class ZeroAdam:
    """RS + AG of the mean gradient, then every rank runs Adam on all N parameters (full state),
    kept in an inner torch.optim.Adam."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        self.inner = torch.optim.Adam(self.params, lr=lr, betas=betas, eps=eps, foreach=False)

    def step(self):
        W = self.comm.world_size
        like = self.params[0]
        flat = torch.zeros(W * self.c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        part = torch.empty(self.c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(part, flat)
        self.comm.all_gather_into_tensor(flat, part / W)
        i = 0
        for p in self.params:
            p.grad = flat[i : i + p.numel()].view_as(p).clone()
            i += p.numel()
        self.inner.step()

    def state_numel(self):
        return 2 * self.c
