# verdict: fail
# sample: real_process_group
# message: an all_reduce gives every rank the whole averaged gradient
# why: all-reduces the whole flat gradient instead of reduce-scattering it, then updates its shard and all-gathers: right values, twice the gradient traffic
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        self.m = torch.zeros(self.c, dtype=like.dtype, device=like.device)
        self.v = torch.zeros_like(self.m)
        self.t = 0

    def step(self):
        W, r, c = self.comm.world_size, self.comm.rank, self.c
        like = self.params[0]
        g = torch.zeros(W * c, dtype=like.dtype, device=like.device)
        g[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        self.comm.all_reduce(g)
        g = g[r * c : (r + 1) * c] / W
        flat = torch.zeros(W * c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.detach().reshape(-1) for p in self.params])
        mine = flat[r * c : (r + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        self.m.mul_(b1).add_(g, alpha=1 - b1)
        self.v.mul_(b2).addcmul_(g, g, value=1 - b2)
        mine -= self.lr * (self.m / (1 - b1**self.t)) / ((self.v / (1 - b2**self.t)).sqrt() + self.eps)
        self.comm.all_gather_into_tensor(flat, mine)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(flat[i : i + p.numel()].view_as(p))
                i += p.numel()

    def state_dict(self):
        return {"step": self.t, "m": self.m, "v": self.v}

    def load_state_dict(self, state):
        self.t = state["step"]
        self.m.copy_(state["m"])
        self.v.copy_(state["v"])

    def state_numel(self):
        return self.m.numel() + self.v.numel()
