# redteam: two full-size (W*c) flat buffers kept between steps in the cache of functools.lru_cache(torch.zeros) held by the optimizer (the walk enters a memoized function's cache only when the function is the student's)
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: nothing of size N
# why: the same wrong ZeRO-1 as c_zero1_full_buffers_on_comm (honest 6). found by the 24th red team: got 10, honest 6 (no flag). self.buffer = functools.lru_cache(maxsize=None)(torch.zeros); each step takes gbuf, pbuf = self.buffer(W*c, dtype=dt), self.buffer((W*c,), dtype=dt): two cache entries, the same two tensors every step. _held_numel walks a _MEMOIZED's referents only if _students(x); a memoized LIBRARY function (torch.zeros) is skipped whole, and the cache is reachable only through the C object. Fix: walk every lru_cache wrapper's referents (gc.get_referents) reached from the optimizer, whoever wrote the wrapped function (the cache holds what the cell asked for); more generally, skip only the wrapped function, never what the C object holds Stopped (stop 37): the held-state walk enters every lru_cache's cache it reaches, whoever wrote the function
import functools

import torch


class ZeroAdam:
    """ZeRO-1 Adam, but with two full-size flat buffers (W*c elements each) kept between steps."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.shard = -(-self.n // comm.world_size)
        like = self.params[0]
        self.exp_avg = torch.zeros(self.shard, dtype=like.dtype, device=like.device)
        self.exp_avg_sq = torch.zeros_like(self.exp_avg)
        self.t = 0
        W = comm.world_size
        self.buffer = functools.lru_cache(maxsize=None)(torch.zeros)  # a library function: its cache is not walked

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.shard
        dt = self.params[0].dtype
        gbuf, pbuf = self.buffer(world * c, dtype=dt), self.buffer((world * c,), dtype=dt)
        gbuf.zero_()
        gbuf[: self.n] = torch.cat([p.grad.detach().reshape(-1) for p in self.params])
        grad = torch.empty_like(self.exp_avg)
        self.comm.reduce_scatter_tensor(grad, gbuf)
        grad /= world
        pbuf.zero_()
        pbuf[: self.n] = torch.cat([p.detach().reshape(-1) for p in self.params])
        mine = pbuf[rank * c : (rank + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        self.exp_avg.mul_(b1).add_(grad, alpha=1 - b1)
        self.exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (self.exp_avg_sq / (1 - b2**self.t)).sqrt() + self.eps
        mine -= self.lr * (self.exp_avg / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(pbuf, mine)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(pbuf[offset : offset + p.numel()].view_as(p))
                offset += p.numel()

    def state_numel(self):
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
