# redteam: full Adam moments hung on the comm object (the walk skips the comm by identity)
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: nothing of size N
# why: found by a white-box red-team helper (stop 34: 10/10, honest 6; 14 places in all, files and ContextVars among them, out of reach of any walk of the optimizer's objects). Closed by what ZeRO-1 sends, not what it holds: in a relayed world the judge, as the broker, checks that each rank's all_gather_into_tensor of step s is its shard of the updated parameters (parallel_cases.zero_dataflow_problem); an answer that gathers the averaged gradient to run Adam on all N parameters fails whatever it keeps Since stop 37 the held-state walk also counts what the cell set on comm, which fails it first (nothing of size N).
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        comm.zstate = torch.zeros(2 * self.n, dtype=like.dtype, device=like.device)
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
        mv = self.comm.zstate
        m, v = mv[: self.n], mv[self.n :]
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        upd = self.lr * (m / (1 - b1**self.t)) / ((v / (1 - b2**self.t)).sqrt() + self.eps)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p -= upd[i : i + p.numel()].view_as(p)
                i += p.numel()

    def state_numel(self):
        return 2 * self.c
