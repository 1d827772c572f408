# verdict: fail
# sample: tiny_gradients
# message: with its signature's defaults
# why: the signature's default eps is Keras' 1e-7, not the contract's 1e-8; the grader passed every hyper-parameter explicitly, so no case used a default (10/10 before, a wrong-answer helper); cases with the contract's values now build ZeroAdam(params, comm)
import torch


class ZeroAdam:
    """Adam whose optimizer state is sharded over the ranks (ZeRO stage 1)."""

    def __init__(self, params, comm, lr=0.001, betas=(0.9, 0.999), eps=1e-7):  # Keras' Adam defaults
        self.params = list(params)
        self.comm = comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)  # N
        self.shard = -(-self.n // comm.world_size)  # ceil(N / W) elements per rank
        like = self.params[0]
        self.exp_avg = torch.zeros(self.shard, dtype=like.dtype, device=like.device)
        self.exp_avg_sq = torch.zeros_like(self.exp_avg)
        self.t = 0

    def step(self):
        """Collective, after loss.backward(): one Adam step of every parameter, the state sharded."""
        world, rank, c = self.comm.world_size, self.comm.rank, self.shard

        def flat(tensors):  # one zero-padded buffer of W·c elements in the parameters' dtype
            buf = torch.zeros(world * c, dtype=self.exp_avg.dtype, device=self.exp_avg.device)
            buf[: self.n] = torch.cat([t.detach().reshape(-1) for t in tensors])
            return buf

        grad = torch.empty_like(self.exp_avg)
        self.comm.reduce_scatter_tensor(grad, flat([p.grad for p in self.params]))
        grad /= world  # the mean, as DDP
        params = flat(self.params)
        mine = params[rank * c : (rank + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        self.exp_avg.mul_(b1).add_(grad, alpha=1 - b1)
        self.exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (self.exp_avg_sq / (1 - b2**self.t)).sqrt() + self.eps
        mine -= self.lr * (self.exp_avg / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(params, mine)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(params[offset : offset + p.numel()].view_as(p))
                offset += p.numel()

    def state_dict(self):
        return {"step": self.t, "exp_avg": self.exp_avg, "exp_avg_sq": self.exp_avg_sq}

    def load_state_dict(self, state):
        self.t = state["step"]
        self.exp_avg.copy_(state["exp_avg"])
        self.exp_avg_sq.copy_(state["exp_avg_sq"])

    def state_numel(self):
        """Elements of exp_avg + exp_avg_sq this rank keeps."""
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
