# verdict: fail
# message: never changed
# why: shards of N // W elements and no padding: when N is not a multiple of W the last N mod W parameters are never updated
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = self.n // comm.world_size
        like = self.params[0]
        self.m = torch.zeros(self.c, dtype=like.dtype, device=like.device)
        self.v = torch.zeros_like(self.m)
        self.t = 0

    def step(self):
        W, r, c = self.comm.world_size, self.comm.rank, self.c
        g_all = torch.cat([p.grad.reshape(-1) for p in self.params])
        g = torch.empty_like(self.m)
        self.comm.reduce_scatter_tensor(g, g_all[: W * c].contiguous())
        g /= W
        flat = torch.cat([p.detach().reshape(-1) for p in self.params])
        mine = flat[r * c : (r + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        self.m.mul_(b1).add_(g, alpha=1 - b1)
        self.v.mul_(b2).addcmul_(g, g, value=1 - b2)
        mine -= self.lr * (self.m / (1 - b1**self.t)) / ((self.v / (1 - b2**self.t)).sqrt() + self.eps)
        gathered = torch.empty(W * c, dtype=flat.dtype, device=flat.device)
        self.comm.all_gather_into_tensor(gathered, mine)
        flat[: W * c] = gathered
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
