# verdict: fail
# message: holds tensors of
# why: full exp_avg and exp_avg_sq in a dict at module level, every rank updating all N elements, and state_numel() reporting the shard ZeRO should keep; the held-state walk follows the class to its cell's globals
import torch

STATE = {}  # one Adam state for the whole model


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        STATE[id(self)] = {"m": torch.zeros(self.n, dtype=like.dtype), "v": torch.zeros(self.n, dtype=like.dtype), "t": 0}

    def step(self):
        W = self.comm.world_size
        like = self.params[0]
        flat = torch.zeros(W * self.c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        part = torch.empty(self.c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(part, flat)
        self.comm.all_gather_into_tensor(flat, part / W)
        g, s = flat[: self.n], STATE[id(self)]
        s["t"] += 1
        b1, b2 = self.betas
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        upd = self.lr * (s["m"] / (1 - b1 ** s["t"])) / ((s["v"] / (1 - b2 ** s["t"])).sqrt() + self.eps)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p -= upd[i : i + p.numel()].view_as(p)
                i += p.numel()

    def state_numel(self):
        return 2 * self.c  # what a ZeRO-1 rank keeps
