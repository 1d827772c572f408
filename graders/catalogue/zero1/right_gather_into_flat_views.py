# verdict: pass
# why: one flat buffer of W·⌈N/W⌉ elements that the parameters are views of (torch.split, p.data rebound once), and the all-gather writes straight into it: no copy back at all. The buffer is the parameters themselves (and the padding), not optimizer state
import math

import torch


class ZeroAdam:
    """Adam whose optimizer state is sharded over the ranks (ZeRO stage 1)."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        sizes = [p.numel() for p in self.params]
        self.n = sum(sizes)
        self.c = math.ceil(self.n / comm.world_size)
        self.lo = comm.rank * self.c
        with torch.no_grad():
            flat = torch.cat([p.detach().reshape(-1) for p in self.params])
            self.flat_param = torch.nn.functional.pad(flat, (0, comm.world_size * self.c - self.n))
            for p, view in zip(self.params, torch.split(self.flat_param[: self.n], sizes)):
                p.data = view.view(p.shape)
        self.state = {"step": 0, "exp_avg": torch.zeros_like(self.flat_param[: self.c])}
        self.state["exp_avg_sq"] = torch.zeros_like(self.state["exp_avg"])

    @torch.no_grad()
    def step(self):
        W = self.comm.world_size
        flat_grad = torch.nn.functional.pad(
            torch.cat([p.grad.reshape(-1) for p in self.params]), (0, W * self.c - self.n)
        )
        grad = torch.empty(self.c, dtype=flat_grad.dtype, device=flat_grad.device)
        self.comm.reduce_scatter_tensor(grad, flat_grad)
        grad.div_(W)
        st = self.state
        st["step"] += 1
        b1, b2 = self.betas
        st["exp_avg"].lerp_(grad, 1 - b1)
        st["exp_avg_sq"].mul_(b2).addcmul_(grad, grad, value=1 - b2)
        bc1, bc2 = 1 - b1 ** st["step"], 1 - b2 ** st["step"]
        denom = (st["exp_avg_sq"].sqrt() / math.sqrt(bc2)).add_(self.eps)
        shard = self.flat_param[self.lo : self.lo + self.c].clone()
        shard.addcdiv_(st["exp_avg"], denom, value=-self.lr / bc1)
        self.comm.all_gather_into_tensor(self.flat_param, shard)

    def state_dict(self):
        return self.state

    def load_state_dict(self, state):
        self.state["step"] = state["step"]
        self.state["exp_avg"].copy_(state["exp_avg"])
        self.state["exp_avg_sq"].copy_(state["exp_avg_sq"])

    def state_numel(self):
        return self.state["exp_avg"].numel() + self.state["exp_avg_sq"].numel()
