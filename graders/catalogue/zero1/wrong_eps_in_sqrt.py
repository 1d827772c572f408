# verdict: fail
# sample: matches_ddp_adam
# message: eps is inside the square root
# why: eps inside the square root
import torch


class ZeroAdam:
    """Adam whose state is sharded over the ranks (ZeRO stage 1)."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.shard = -(-self.n // comm.world_size)  # ceil(N / W)
        like = self.params[0]
        self.exp_avg = torch.zeros(self.shard, dtype=like.dtype, device=like.device)
        self.exp_avg_sq = torch.zeros_like(self.exp_avg)
        self.t = 0

    def _flat(self, tensors):
        flat = torch.zeros(self.comm.world_size * self.shard, dtype=self.exp_avg.dtype, device=self.exp_avg.device)
        flat[: self.n] = torch.cat([t.detach().reshape(-1) for t in tensors])
        return flat

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.shard
        grad = torch.empty_like(self.exp_avg)
        self.comm.reduce_scatter_tensor(grad, self._flat([p.grad for p in self.params]))
        grad /= world  # the mean, as DDP
        flat = self._flat(self.params)
        mine = flat[rank * c : (rank + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        self.exp_avg.mul_(b1).add_(grad, alpha=1 - b1)
        self.exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (self.exp_avg_sq / (1 - b2**self.t) + self.eps).sqrt()
        mine -= self.lr * (self.exp_avg / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(flat, mine)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(flat[offset : offset + p.numel()].view_as(p))
                offset += p.numel()

    def state_dict(self):
        return {"step": self.t, "exp_avg": self.exp_avg, "exp_avg_sq": self.exp_avg_sq}

    def load_state_dict(self, state):
        self.t = state["step"]
        self.exp_avg.copy_(state["exp_avg"])
        self.exp_avg_sq.copy_(state["exp_avg_sq"])

    def state_numel(self):
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
