# verdict: pass
# why: the own shard picked out of the flat buffers by a boolean mask over all W·c positions, kept beside a master copy of the shard: a mask is an index, not optimizer state (an honest-student helper's answer: held counted the mask's elements and failed it, 6/10)
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm, self.lr, self.betas, self.eps = comm, lr, betas, eps
        W, r = comm.world_size, comm.rank
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // W)
        like = self.params[0]
        self.mine = torch.zeros(W * self.c, dtype=torch.bool, device=like.device)
        self.mine[r * self.c : (r + 1) * self.c] = True
        flat = torch.zeros(W * self.c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.detach().reshape(-1) for p in self.params])
        self.master = flat[self.mine].clone()
        self.m = torch.zeros_like(self.master)
        self.v = torch.zeros_like(self.master)
        self.t = 0

    def step(self):
        W = self.comm.world_size
        like = self.params[0]
        flat = torch.zeros(W * self.c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        g = torch.empty(self.c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(g, flat)
        g = g / W
        self.t += 1
        b1, b2 = self.betas
        self.m = b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * g * g
        m_hat = self.m / (1 - b1**self.t)
        v_hat = self.v / (1 - b2**self.t)
        self.master = self.master - self.lr * m_hat / (v_hat.sqrt() + self.eps)
        full = torch.empty(W * self.c, dtype=like.dtype, device=like.device)
        self.comm.all_gather_into_tensor(full, self.master)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(full[i : i + p.numel()].view_as(p))
                i += p.numel()

    def state_dict(self):
        return {"t": self.t, "m": self.m, "v": self.v, "master": self.master}

    def load_state_dict(self, state):
        self.t = state["t"]
        self.m = state["m"].to(self.master)
        self.v = state["v"].to(self.master)
        self.master = state["master"].to(self.master)

    def state_numel(self):
        return self.m.numel() + self.v.numel()
