# redteam: full-size (W·c) exp_avg/exp_avg_sq and a full flat parameter buffer on every rank, all views of one storage that is also the .grad of a shard-sized Parameter the optimizer owns (the walk skips an own Parameter's .grad storage whatever its size)
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: holds tensors of
# why: found by a white-box red-team helper (stop 35; 10 -> 6): full moments and a full parameter buffer as views of one storage that is also the .grad of a shard-sized Parameter of the optimizer's own; the held-state walk skipped that whole storage. Now it discounts only the .grad's own elements (parallel_sim._held_numel)
import torch
from torch import nn


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        W = comm.world_size
        self.shard = -(-self.n // W)
        like = self.params[0]
        full = W * self.shard
        big = torch.zeros(self.shard + 3 * full, dtype=like.dtype, device=like.device)
        self._p = nn.Parameter(torch.zeros(self.shard, dtype=like.dtype, device=like.device))
        self._p.grad = big[: self.shard]          # "my shard's gradient"
        self.exp_avg_full = big[self.shard : self.shard + full]       # full moments on every rank
        self.exp_avg_sq_full = big[self.shard + full : self.shard + 2 * full]
        self.buf = big[self.shard + 2 * full :]   # a full flat parameter buffer kept between steps
        self.t = 0

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.shard
        flatg = torch.zeros(world * c, dtype=self.buf.dtype, device=self.buf.device)
        flatg[: self.n] = torch.cat([p.grad.detach().reshape(-1) for p in self.params])
        grad = self._p.grad
        self.comm.reduce_scatter_tensor(grad, flatg)
        grad /= world
        self.buf.zero_()
        self.buf[: self.n] = torch.cat([p.detach().reshape(-1) for p in self.params])
        lo, hi = rank * c, (rank + 1) * c
        mine = self.buf[lo:hi].clone()
        self.t += 1
        b1, b2 = self.betas
        m, v = self.exp_avg_full[lo:hi], self.exp_avg_sq_full[lo:hi]
        m.mul_(b1).add_(grad, alpha=1 - b1)
        v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (v / (1 - b2**self.t)).sqrt() + self.eps
        mine -= self.lr * (m / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(self.buf, mine)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(self.buf[offset : offset + p.numel()].view_as(p))
                offset += p.numel()

    def state_numel(self):
        return 2 * self.shard
