# redteam: ZeRO-1's traffic and values, but full-size (W·c) exp_avg/exp_avg_sq kept between steps packed into the digits of one Python int (int.from_bytes) on the optimizer, unpacked each step
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: between steps rank
# why: found by the lead while closing stop 37's routes (10/10, no flag; honest 6 as wrong_full_state): the held-state walk counted no str or int, and with N = 18 a name takes more memory than full moments. Stopped (stop 38): str, int, float and complex objects count by their memory past 16 KiB in all (parallel_sim.PY_SCALARS_ALLOWANCE), and zero1's last state case and last real case have N = 4160, where full moments pass that allowance
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
        return int.from_bytes(torch.cat([m, v]).numpy().tobytes(), "little")

    def _moments(self):
        k = self.params[0].element_size() * 2 * self.comm.world_size * self.shard
        both = torch.frombuffer(bytearray(self._v.to_bytes(k, "little")), dtype=self.params[0].dtype).clone()
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
