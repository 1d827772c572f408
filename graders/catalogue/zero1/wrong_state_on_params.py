# verdict: fail
# message: after step 2 differ from DDP
# message: not its shard of the updated parameters
# fails: real_process_group sharded_state_and_traffic
# why: Adam's state kept on each parameter, as torch.optim keeps it per parameter, full size on every rank (each rank steps all N elements after an all-gather of the averaged gradient), and state_numel() counting only the shard; its state_dict() carries only the step count, and the state, keyed by the model's parameters, survives each new optimizer object in one process but not a fresh process (the state test's later steps)
import torch


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        for p in self.params:
            if not hasattr(p, "exp_avg"):  # the model's parameters outlive each optimizer made for them
                p.exp_avg, p.exp_avg_sq = torch.zeros_like(p), torch.zeros_like(p)
        self.t = 0

    def step(self):
        W = self.comm.world_size
        like = self.params[0]
        flat = torch.zeros(W * self.c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        part = torch.empty(self.c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(part, flat)
        self.comm.all_gather_into_tensor(flat, part / W)
        self.t += 1
        b1, b2 = self.betas
        i = 0
        with torch.no_grad():
            for p in self.params:
                g = flat[i : i + p.numel()].view_as(p)
                i += p.numel()
                p.exp_avg.mul_(b1).add_(g, alpha=1 - b1)
                p.exp_avg_sq.mul_(b2).addcmul_(g, g, value=1 - b2)
                p -= self.lr * (p.exp_avg / (1 - b1**self.t)) / ((p.exp_avg_sq / (1 - b2**self.t)).sqrt() + self.eps)

    def state_dict(self):
        return {"step": self.t}  # exp_avg and exp_avg_sq live on the parameters

    def load_state_dict(self, state):
        self.t = state["step"]

    def state_numel(self):
        return 2 * self.c  # the shard's share
