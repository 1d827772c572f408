# redteam: the full exp_avg/exp_avg_sq of size N on every rank, kept by an object reached only through a bound method (self.update = _Moments(n).update), with state_numel() reporting 2·⌈N/W⌉
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: holds tensors of
# why: found by a white-box red-team helper (stop 33: 10/10, no flag; honest 6 as wrong_full_state). The held-state walk (ch13lib.parallel_sim._held_numel) counted torch tensors only and followed a bound method's __func__ only; it now follows a bound method's object and a partial's arguments, and counts numpy arrays, bytes and lists of floats
import torch


class _Moments:
    def __init__(self, n, like):
        self.m = torch.zeros(n, dtype=like.dtype, device=like.device)
        self.v = torch.zeros(n, dtype=like.dtype, device=like.device)

    def update(self, g, b1, b2):
        self.m.mul_(b1).add_(g, alpha=1 - b1)
        self.v.mul_(b2).addcmul_(g, g, value=1 - b2)
        return self.m, self.v


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        self.update = _Moments(self.n, like).update
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
        m, v = self.update(g, b1, b2)
        upd = self.lr * (m / (1 - b1**self.t)) / ((v / (1 - b2**self.t)).sqrt() + self.eps)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p -= upd[i : i + p.numel()].view_as(p)
                i += p.numel()

    def state_numel(self):
        return 2 * self.c
