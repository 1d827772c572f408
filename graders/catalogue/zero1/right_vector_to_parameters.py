# verdict: pass
# why: the reference, with the gathered flat vector written back by torch.nn.utils.vector_to_parameters (it rebinds each p.data to a view of that vector, as the contract allows): the model keeps its Parameter objects and they hold the updated values
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters


class ZeroAdam:
    """Adam whose optimizer state is sharded over the ranks (ZeRO stage 1)."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.shard = -(-self.n // comm.world_size)
        like = self.params[0]
        self.exp_avg = torch.zeros(self.shard, dtype=like.dtype, device=like.device)
        self.exp_avg_sq = torch.zeros_like(self.exp_avg)
        self.t = 0

    def _padded(self, vec):
        return torch.nn.functional.pad(vec, (0, self.comm.world_size * self.shard - self.n))

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.shard
        grads = self._padded(torch.cat([p.grad.detach().reshape(-1) for p in self.params]))
        grad = torch.empty_like(self.exp_avg)
        self.comm.reduce_scatter_tensor(grad, grads)
        grad /= world
        with torch.no_grad():
            flat = self._padded(parameters_to_vector(self.params))
        mine = flat[rank * c : (rank + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        self.exp_avg.mul_(b1).add_(grad, alpha=1 - b1)
        self.exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (self.exp_avg_sq / (1 - b2**self.t)).sqrt() + self.eps
        mine -= self.lr * (self.exp_avg / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(flat, mine)
        vector_to_parameters(flat[: self.n], self.params)

    def state_dict(self):
        return {"step": self.t, "exp_avg": self.exp_avg, "exp_avg_sq": self.exp_avg_sq}

    def load_state_dict(self, state):
        self.t = state["step"]
        self.exp_avg.copy_(state["exp_avg"])
        self.exp_avg_sq.copy_(state["exp_avg_sq"])

    def state_numel(self):
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
