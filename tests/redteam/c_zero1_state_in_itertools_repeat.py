# redteam: full Adam moments inside itertools.repeat((m, v)), read back with next() each step
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: holds tensors of
# why: found by a white-box red-team helper (stop 34: 10/10, honest 6): the walk entered only the containers it named (vars() of a C object raises); it now follows gc.get_referents of every object that is not library code, with a stack instead of a depth limit (parallel_sim._held_numel)
import itertools
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        self.m = torch.zeros(self.n, dtype=like.dtype, device=like.device)
        self.v = torch.zeros(self.n, dtype=like.dtype, device=like.device)
        self.moments = itertools.repeat((self.m, self.v))
        del self.m, self.v
        self.t = 0

    def step(self):
        W = self.comm.world_size
        like = self.params[0]
        flat = torch.zeros(W * self.c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        part = torch.empty(self.c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(part, flat)
        self.comm.all_gather_into_tensor(flat, part / W)
        g = flat[: self.n]
        self.t += 1
        b1, b2 = self.betas
        m, v = next(self.moments)
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        upd = self.lr * (m / (1 - b1**self.t)) / ((v / (1 - b2**self.t)).sqrt() + self.eps)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p -= upd[i : i + p.numel()].view_as(p)
                i += p.numel()

    def state_numel(self):
        return 2 * self.c
