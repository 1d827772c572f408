# verdict: pass
# why: right_inner_torch_adam with the reduce-scatter writing into a gradient buffer made once, which is also the shard parameter's .grad. Found by an honest-student helper: 6/10, once the held-state walk entered the inner Adam it counted that buffer as well as Adam's state; the .grad of a parameter the optimizer holds is its gradient shard and is not counted (as the catalogue answer's shard.grad never was)
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        W, r = comm.world_size, comm.rank
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // W)
        with torch.no_grad():
            flat = torch.cat([p.detach().reshape(-1) for p in self.params])
            flat = torch.nn.functional.pad(flat, (0, W * self.c - self.n))
            self.shard = torch.nn.Parameter(flat[r * self.c : (r + 1) * self.c].clone())
        self.grad_shard = torch.zeros_like(self.shard.detach())
        self.shard.grad = self.grad_shard
        self.opt = torch.optim.Adam([self.shard], lr=lr, betas=betas, eps=eps)

    def step(self):
        W = self.comm.world_size
        g = torch.cat([p.grad.reshape(-1) for p in self.params])
        g = torch.nn.functional.pad(g, (0, W * self.c - self.n))
        self.comm.reduce_scatter_tensor(self.grad_shard, g)
        self.grad_shard.div_(W)
        self.opt.step()
        full = torch.empty(W * self.c, dtype=g.dtype, device=g.device)
        self.comm.all_gather_into_tensor(full, self.shard.detach())
        with torch.no_grad():
            for p, piece in zip(self.params, full[: self.n].split([p.numel() for p in self.params])):
                p.copy_(piece.view_as(p))

    def state_dict(self):
        return self.opt.state_dict()

    def load_state_dict(self, state):
        self.opt.load_state_dict(state)

    def state_numel(self):
        s = self.opt.state[self.shard]
        return s["exp_avg"].numel() + s["exp_avg_sq"].numel() if s else 0
