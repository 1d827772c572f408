# redteam: ZeRO-1's traffic and values, but full-size (W·c) exp_avg/exp_avg_sq buffers on every rank, held in a module-level ContextVar
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: between steps rank 0
# why: white-box red team 18: the held-state walk (parallel_sim._held_numel) reaches a ContextVar the methods name, but gc.get_referents of a ContextVar does not lead to the value set in the running context, so 2·W·c elements of moments count as 0; the dataflow check (zero_dataflow_problem) only proves the rank did not gather the full gradient, not that it did not allocate full-size state. Unhidden (same code with self.exp_avg) it scores 6: sharded_state_and_traffic and real_process_group fail on "nothing of size N". Stopped (stop 36): parallel_sim._held_numel also follows what no referent leads to: a ContextVar's value in the rank's context, a threading.local's attributes in its thread, a module the cell made
import contextvars

import torch

_STATE = contextvars.ContextVar("zero1_state")


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
        _STATE.set((m, torch.zeros_like(m)))
        self.t = 0

    def _moments(self):
        return _STATE.get()

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
