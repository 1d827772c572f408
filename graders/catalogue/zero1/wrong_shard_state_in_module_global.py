# verdict: fail
# message: KeyError
# fails: real_process_group sharded_state_and_traffic
# why: shards the state right but keeps each rank's moments in a module-level dict instead of its state_dict(): right while one process takes every step, a KeyError once each later step starts in a fresh process, where the dict is empty
import torch

KEPT = {}  # each rank's moments, kept here between steps


class ZeroAdam:
    """优化器状态分片到各 rank 上的 Adam (ZeRO 第 1 阶段)。

    Adam whose optimizer state is sharded over the ranks (ZeRO stage 1).
    """

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
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
        """集合操作, 在 loss.backward() 之后调用: 对每个参数做一步 Adam, 状态分片保存。

        Collective, after loss.backward(): one Adam step of every parameter, the state sharded.
        """
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
        """本 rank 从一步带到下一步的一切 / everything this rank carries from one step to the next."""
        KEPT[self.comm.rank] = (self.exp_avg, self.exp_avg_sq)
        return {"step": self.t}

    def load_state_dict(self, state):
        """在新建的对象上接着 state_dict() 的返回值继续 / continue from what state_dict() returned, on a new object."""
        self.t = state["step"]
        self.exp_avg, self.exp_avg_sq = KEPT[self.comm.rank]

    def state_numel(self):
        """本 rank 保存的 exp_avg + exp_avg_sq 元素个数。

        Elements of exp_avg + exp_avg_sq this rank keeps.
        """
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
