# redteam: full Adam moments kept as the .grad of Parameters that share the model parameters' storage
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: holds tensors of
# why: found by a white-box red-team helper (stop 34: 10/10, honest 6): the walk never looked at a tensor's .grad, and exempted a held Parameter's .grad; it now visits .grad (and the autograd graph) and exempts it only for a Parameter of the optimizer's own storage (parallel_sim._held_numel)
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        self.mh = [torch.nn.Parameter(p.detach(), requires_grad=True) for p in self.params]
        self.vh = [torch.nn.Parameter(p.detach(), requires_grad=True) for p in self.params]
        for h in self.mh + self.vh:
            h.grad = torch.zeros_like(h)
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
        self.m = torch.cat([h.grad.reshape(-1) for h in self.mh])
        self.v = torch.cat([h.grad.reshape(-1) for h in self.vh])
        self.m.mul_(b1).add_(g, alpha=1 - b1)
        self.v.mul_(b2).addcmul_(g, g, value=1 - b2)
        upd = self.lr * (self.m / (1 - b1**self.t)) / ((self.v / (1 - b2**self.t)).sqrt() + self.eps)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p -= upd[i : i + p.numel()].view_as(p)
                i += p.numel()
        i = 0
        for hm, hv in zip(self.mh, self.vh):
            hm.grad.copy_(self.m[i : i + hm.numel()].view_as(hm))
            hv.grad.copy_(self.v[i : i + hv.numel()].view_as(hv))
            i += hm.numel()
        del self.m, self.v

    def state_numel(self):
        return 2 * self.c
