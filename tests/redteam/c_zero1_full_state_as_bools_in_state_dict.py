# redteam: full Adam moments (every position, on every rank) carried in the state_dict() as one Python bool per bit, with state_numel() claiming a shard
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: state_dict() carries
# why: found by a white-box red-team helper on the state_dict boundary (10/10, honest 6): the measure skipped None and bools and counted containers by their items only, so bits spelled as bools (or as None and []) crossed for free. Every node now costs at least one element (parallel_cases.state_elements)
import torch


class ZeroAdam:
    """Adam whose optimizer state is sharded over the ranks (ZeRO stage 1)."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        size = comm.world_size * self.c
        like = self.params[0]
        # one allocation: [parameters (padded) | exp_avg | exp_avg_sq]
        self.buffer = torch.zeros(3 * size, dtype=like.dtype, device=like.device)
        self.flat, self.exp_avg, self.exp_avg_sq = self.buffer.split(size)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                view = self.flat[offset : offset + p.numel()].view_as(p)
                view.copy_(p)
                p.data = view
                offset += p.numel()
        self.t = 0

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.c
        grads = torch.zeros_like(self.flat)
        grads[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        g = torch.empty(c, dtype=self.flat.dtype, device=self.flat.device)
        self.comm.reduce_scatter_tensor(g, grads)
        g /= world
        lo, hi = rank * c, (rank + 1) * c
        m, v = self.exp_avg[lo:hi], self.exp_avg_sq[lo:hi]
        self.t += 1
        b1, b2 = self.betas
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = (v / (1 - b2**self.t)).sqrt() + self.eps
        mine = self.flat[lo:hi] - self.lr * (m / (1 - b1**self.t)) / denom
        with torch.no_grad():
            self.comm.all_gather_into_tensor(self.flat, mine)

    def state_dict(self):
        # the FULL exp_avg and exp_avg_sq (2·W·c values), as Python bools: state_elements counts bools as 0
        import numpy as np
        raw = torch.cat([self.exp_avg, self.exp_avg_sq]).detach().cpu().contiguous().view(torch.uint8).numpy()
        return {"step": self.t, "bits": np.unpackbits(raw).astype(bool).tolist()}

    def load_state_dict(self, state):
        import numpy as np
        self.t = state["step"]
        raw = np.packbits(np.array(state["bits"], dtype=bool))
        both = torch.from_numpy(raw.copy()).view(self.exp_avg.dtype)
        with torch.no_grad():
            self.exp_avg.copy_(both[: self.exp_avg.numel()])
            self.exp_avg_sq.copy_(both[self.exp_avg.numel():])

    def state_numel(self):
        return 2 * self.c  # this rank's slices of exp_avg and exp_avg_sq
