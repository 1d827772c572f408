# verdict: fail
# message: at most 2·⌈N/W⌉
# why: full optimizer state on every rank: the averaged gradient is all-gathered and every rank runs Adam on all N parameters (DDP + Adam with extra steps); right values, no memory saved
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
        self.m.mul_(b1).add_(g, alpha=1 - b1)
        self.v.mul_(b2).addcmul_(g, g, value=1 - b2)
        upd = self.lr * (self.m / (1 - b1**self.t)) / ((self.v / (1 - b2**self.t)).sqrt() + self.eps)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p -= upd[i : i + p.numel()].view_as(p)
                i += p.numel()

    def state_dict(self):
        return {"step": self.t, "exp_avg": self.m, "exp_avg_sq": self.v}

    def load_state_dict(self, state):
        self.t = state["step"]
        self.m.copy_(state["exp_avg"])
        self.v.copy_(state["exp_avg_sq"])

    def state_numel(self):
        return self.m.numel() + self.v.numel()
