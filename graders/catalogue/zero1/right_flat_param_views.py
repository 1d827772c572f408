# verdict: pass
# why: the parameters live in one flat buffer of W·⌈N/W⌉ elements as FSDP's flat parameters do: __init__ copies them in and rebinds each p.data to a view of it; step() copies the all-gather's output into that buffer in place. The buffer is the parameters themselves (and the padding), not optimizer state
import torch


class ZeroAdam:
    """Adam whose optimizer state is sharded over the ranks (ZeRO stage 1)."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        self.flat = torch.zeros(comm.world_size * self.c, dtype=like.dtype, device=like.device)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                view = self.flat[offset : offset + p.numel()].view_as(p)
                view.copy_(p)
                p.data = view
                offset += p.numel()
        self.m = torch.zeros(self.c, dtype=like.dtype, device=like.device)
        self.v = torch.zeros_like(self.m)
        self.t = 0

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.c
        grads = torch.zeros_like(self.flat)
        grads[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        g = torch.empty_like(self.m)
        self.comm.reduce_scatter_tensor(g, grads)
        g /= world
        self.t += 1
        b1, b2 = self.betas
        self.m.mul_(b1).add_(g, alpha=1 - b1)
        self.v.mul_(b2).addcmul_(g, g, value=1 - b2)
        m_hat = self.m / (1 - b1**self.t)
        v_hat = self.v / (1 - b2**self.t)
        mine = self.flat[rank * c : (rank + 1) * c] - self.lr * m_hat / (v_hat.sqrt() + self.eps)
        gathered = torch.empty_like(self.flat)
        self.comm.all_gather_into_tensor(gathered, mine)
        with torch.no_grad():
            self.flat.copy_(gathered)

    def state_dict(self):
        return {"step": self.t, "m": self.m, "v": self.v}

    def load_state_dict(self, state):
        self.t = state["step"]
        self.m.copy_(state["m"])
        self.v.copy_(state["v"])

    def state_numel(self):
        return self.m.numel() + self.v.numel()
