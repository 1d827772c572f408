# verdict: pass
# why: keeps its own shard of the parameters between steps (allowed), divides each rank's gradient by W before the reduce-scatter (a sum of means), pads with F.pad
import torch
import torch.nn.functional as F


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm, self.lr, self.betas, self.eps = comm, lr, betas, eps
        self.N = sum(p.numel() for p in self.params)
        W = comm.world_size
        self.c = (self.N + W - 1) // W
        flat = F.pad(torch.cat([p.detach().reshape(-1) for p in self.params]), (0, W * self.c - self.N))
        self.master = flat[comm.rank * self.c : (comm.rank + 1) * self.c].clone()
        self.exp_avg = torch.zeros_like(self.master)
        self.exp_avg_sq = torch.zeros_like(self.master)
        self.t = 0

    def step(self):
        W = self.comm.world_size
        g = torch.cat([p.grad.reshape(-1) / W for p in self.params])
        g = F.pad(g, (0, W * self.c - self.N))
        mine = torch.empty_like(self.master)
        self.comm.reduce_scatter_tensor(mine, g)
        self.t += 1
        b1, b2 = self.betas
        self.exp_avg = b1 * self.exp_avg + (1 - b1) * mine
        self.exp_avg_sq = b2 * self.exp_avg_sq + (1 - b2) * mine * mine
        m_hat = self.exp_avg / (1 - b1**self.t)
        v_hat = self.exp_avg_sq / (1 - b2**self.t)
        self.master -= self.lr * m_hat / (v_hat.sqrt() + self.eps)
        full = torch.empty(W * self.c, dtype=self.master.dtype, device=self.master.device)
        self.comm.all_gather_into_tensor(full, self.master)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(full[i : i + p.numel()].reshape(p.shape))
                i += p.numel()

    def state_dict(self):
        return {"step": self.t, "exp_avg": self.exp_avg, "exp_avg_sq": self.exp_avg_sq, "master": self.master}

    def load_state_dict(self, state):
        self.t = state["step"]
        self.exp_avg = state["exp_avg"].to(self.master)
        self.exp_avg_sq = state["exp_avg_sq"].to(self.master)
        self.master.copy_(state["master"])

    def state_numel(self):
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
