# verdict: pass
# why: torch.optim.Adam's own arithmetic (step_size = lr / bc1, denom = sqrt(v) / sqrt(bc2) + eps, addcdiv_), the shard's bounds computed once, the copy back with torch.split
import math

import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.beta1, self.beta2, self.eps = lr, betas[0], betas[1], eps
        self.sizes = [p.numel() for p in self.params]
        self.total = sum(self.sizes)
        self.chunk = math.ceil(self.total / comm.world_size)
        p0 = self.params[0]
        self.m = torch.zeros(self.chunk, dtype=p0.dtype, device=p0.device)
        self.v = torch.zeros(self.chunk, dtype=p0.dtype, device=p0.device)
        self.step_count = 0

    def step(self):
        W = self.comm.world_size
        p0 = self.params[0]
        buf = torch.zeros(W * self.chunk, dtype=p0.dtype, device=p0.device)
        torch.cat([p.grad.reshape(-1) for p in self.params], out=buf[: self.total])
        g = torch.zeros(self.chunk, dtype=p0.dtype, device=p0.device)
        self.comm.reduce_scatter_tensor(g, buf)
        g.div_(W)
        lo = self.comm.rank * self.chunk
        with torch.no_grad():
            buf.zero_()
            torch.cat([p.reshape(-1) for p in self.params], out=buf[: self.total])
        shard = buf[lo : lo + self.chunk].clone()
        self.step_count += 1
        self.m.mul_(self.beta1).add_(g, alpha=1 - self.beta1)
        self.v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
        bc1 = 1 - self.beta1**self.step_count
        bc2 = 1 - self.beta2**self.step_count
        denom = (self.v.sqrt() / math.sqrt(bc2)).add_(self.eps)
        shard.addcdiv_(self.m, denom, value=-self.lr / bc1)
        self.comm.all_gather_into_tensor(buf, shard)
        with torch.no_grad():
            for p, piece in zip(self.params, buf[: self.total].split(self.sizes)):
                p.copy_(piece.view_as(p))

    def state_dict(self):
        return {"step": self.step_count, "m": self.m, "v": self.v}

    def load_state_dict(self, state):
        self.step_count = state["step"]
        self.m.copy_(state["m"])
        self.v.copy_(state["v"])

    def state_numel(self):
        return self.m.numel() + self.v.numel()
