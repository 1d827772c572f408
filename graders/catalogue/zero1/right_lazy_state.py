# verdict: pass
# why: state made lazily at the first step in a dict like torch.optim's, the shard's real length (possibly shorter than ⌈N/W⌉ on the last rank) updated and the rest left as padding
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = [p for p in params]
        self.comm = comm
        self.hp = {"lr": lr, "betas": betas, "eps": eps}
        self.state = {}

    def step(self):
        W, r = self.comm.world_size, self.comm.rank
        like = self.params[0]
        N = sum(p.numel() for p in self.params)
        c = -(-N // W)
        grads = torch.zeros(W * c, dtype=like.dtype, device=like.device)
        grads[:N] = torch.cat([p.grad.flatten() for p in self.params])
        g = torch.empty(c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(g, grads)
        g = g / W
        if not self.state:
            self.state = {"step": 0, "exp_avg": torch.zeros_like(g), "exp_avg_sq": torch.zeros_like(g)}
        st = self.state
        st["step"] += 1
        b1, b2 = self.hp["betas"]
        st["exp_avg"].lerp_(g, 1 - b1)
        st["exp_avg_sq"].mul_(b2).add_((1 - b2) * g * g)
        flat = torch.zeros(W * c, dtype=like.dtype, device=like.device)
        flat[:N] = torch.cat([p.detach().flatten() for p in self.params])
        shard = flat[r * c : (r + 1) * c].clone()
        real = max(0, min(c, N - r * c))
        m_hat = st["exp_avg"] / (1 - b1 ** st["step"])
        v_hat = st["exp_avg_sq"] / (1 - b2 ** st["step"])
        upd = self.hp["lr"] * m_hat / (v_hat.sqrt() + self.hp["eps"])
        shard[:real] -= upd[:real]
        self.comm.all_gather_into_tensor(flat, shard)
        k = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(flat[k : k + p.numel()].view_as(p))
                k += p.numel()

    def state_dict(self):
        return self.state

    def load_state_dict(self, state):
        if not state:  # no step taken yet
            self.state = {}
            return
        like = self.params[0]
        self.state = {
            "step": state["step"],
            "exp_avg": state["exp_avg"].to(like.device, like.dtype),
            "exp_avg_sq": state["exp_avg_sq"].to(like.device, like.dtype),
        }

    def state_numel(self):
        if not self.state:
            return 0
        return self.state["exp_avg"].numel() + self.state["exp_avg_sq"].numel()
