# redteam: Adam moments allocated full-size (2·W·⌈N/W⌉ elements, only this rank's slice ever used) inside one buffer whose head step() hands back to the model's first parameter as its .grad (a view): _held_numel skips every storage a model parameter's .grad lives in, so the full-size state is never counted; state_numel() reports 2·⌈N/W⌉
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: holds tensors of
# why: found by a white-box red-team helper (stop 35, on the same stop's fix for an own Parameter's .grad; 10 -> 6): full-size moments in one buffer laid out as [grad of params[0] | m | v], params[0].grad set to a view of it at the end of step(); the held-state walk skipped every model .grad's whole storage. The parameters and their grads now count only their own elements out of their storages (parallel_sim._held_numel)
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.W, self.r = comm.world_size, comm.rank
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // self.W)
        self.t = 0
        self.k = self.params[0].numel()
        like = self.params[0]
        full = self.W * self.c
        # [ grad of params[0] | m over all W·c positions | v over all W·c positions ]
        self.buf = torch.zeros(self.k + 2 * full, dtype=like.dtype, device=like.device)
        self.m = self.buf[self.k : self.k + full]
        self.v = self.buf[self.k + full :]

    def step(self):
        W, c, r = self.W, self.c, self.r
        like = self.params[0]
        flat = torch.zeros(W * c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        g = torch.empty(c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(g, flat)
        g /= W
        self.t += 1
        b1, b2 = self.betas
        lo, hi = r * c, (r + 1) * c
        m, v = self.m[lo:hi], self.v[lo:hi]
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        mine = torch.cat([p.detach().reshape(-1) for p in self.params] + [torch.zeros(W * c - self.n, dtype=like.dtype)])[lo:hi]
        mine = mine - self.lr * (m / (1 - b1**self.t)) / ((v / (1 - b2**self.t)).sqrt() + self.eps)
        out = torch.empty(W * c, dtype=like.dtype, device=like.device)
        self.comm.all_gather_into_tensor(out, mine.contiguous())
        i = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(out[i : i + p.numel()].view_as(p))
                i += p.numel()
        p0 = self.params[0]
        head = self.buf[: self.k]
        head.copy_(p0.grad.reshape(-1))
        p0.grad = head.view_as(p0)

    def state_numel(self):
        return 2 * self.c
