# redteam: ZeRO-1's traffic and values, but full-size (W·c) exp_avg/exp_avg_sq kept between steps packed into tuples of 8 Python floats (a list of them) on the optimizer, unpacked each step
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: between steps rank
# why: found by the lead while closing the text route (stop 38: 10/10, no flag; honest 6 as wrong_full_state): the walk counted Python floats only past 8 in one container, so 8 per tuple were free. Stopped (stop 38): str, int, float and complex objects count by their memory past 16 KiB in all (parallel_sim.PY_SCALARS_ALLOWANCE), in zero1's cases of N = 4160
import contextvars

import torch



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
        self._v = self._pack(m, torch.zeros_like(m))
        self.t = 0

    def _pack(self, m, v):
        flat = torch.cat([m, v]).tolist()
        return [tuple(flat[i : i + 8]) for i in range(0, len(flat), 8)]

    def _moments(self):
        both = torch.tensor([x for t in self._v for x in t], dtype=self.params[0].dtype)
        n = both.numel() // 2
        return both[:n], both[n:]

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
        self._v = self._pack(m_all, v_all)
        mine -= self.lr * (m / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(params, mine)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(params[offset : offset + p.numel()].view_as(p))
                offset += p.numel()

    def state_numel(self):
        return 2 * self.shard
