# redteam: ZeRO-1 traffic and values, but full-size (W·c) moments on every rank, held in a module the cell made and named "__main__"
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: between steps rank 0
# why: white-box red team 20: parallel_sim._held_numel follows a module the cell made only when it has no __spec__ and is not named "__main__"; a types.ModuleType("__main__") is taken for the real __main__ (a library module) and skipped, so 2·W·c elements of moments go uncounted. Stopped (stop 36): the walk enters every module that was not loaded before the cell (parallel_sim._MODULES_BEFORE), whatever its name or spec
import contextvars

import torch

import types
_STATE = types.ModuleType("__main__")


class ZeroAdam:
    """ZeRO-1's traffic, but full-size (W·c) moment buffers on every rank; only this rank's slice is used."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.shard = -(-self.n // comm.world_size)
        like = self.params[0]
        m = torch.zeros(comm.world_size * self.shard, dtype=like.dtype, device=like.device)
        _STATE.v = (m, torch.zeros_like(m))
        self.t = 0

    def _moments(self):
        return _STATE.v

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.shard
        like = self.params[0]

        def flat(tensors):
            buf = torch.zeros(world * c, dtype=like.dtype, device=like.device)
            buf[: self.n] = torch.cat([t.detach().reshape(-1) for t in tensors])
            return buf

        grad = torch.empty(c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(grad, flat([p.grad for p in self.params]))
        grad /= world
        params = flat(self.params)
        mine = params[rank * c : (rank + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        m_all, v_all = self._moments()
        m, v = m_all[rank * c : (rank + 1) * c], v_all[rank * c : (rank + 1) * c]
        m.mul_(b1).add_(grad, alpha=1 - b1)
        v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (v / (1 - b2**self.t)).sqrt() + self.eps
        mine -= self.lr * (m / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(params, mine)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(params[offset : offset + p.numel()].view_as(p))
                offset += p.numel()

    def state_numel(self):
        return 2 * self.shard
