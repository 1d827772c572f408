# redteam: two full-size (W*c) flat buffers kept between steps, hung as an attribute of a str subclass (the held-state walk skips every str/int/float/complex instance, subclasses included)
# kind: cell
# target: zero1
# score: zero1=6
# message: zero1: nothing of size N
# why: a natural wrong ZeRO-1 (persistent full-size gradient and parameter buffers; contract 8.5: nothing of size N between steps) scores 6 honestly (sharded_state_and_traffic: 48 elements held, and real_process_group's check before the real world). Putting the buffers on an instance of `class Label(str)` hides them: parallel_sim._held_numel does `isinstance(x, (ModuleType, str, int, float, complex)) -> continue`, so a subclass instance's __dict__ is never entered. Found by the 22nd red team: got 10, honest 6, no flag Stopped (stop 37): the held-state walk (parallel_sim._held_numel) walks a str, int or float subclass's object, follows a C method's __self__, and walks what the cell set on comm (its attributes compared with those it had before the cell got it)
import torch


class Label(str):
    pass


class ZeroAdam:
    """ZeRO-1 Adam, but with two full-size flat buffers (W*c elements each) kept between steps."""

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
        W = comm.world_size
        self.bufs = Label("bufs")
        self.bufs.held = [torch.zeros(W * self.shard, dtype=like.dtype), torch.zeros(W * self.shard, dtype=like.dtype)]

    def step(self):
        world, rank, c = self.comm.world_size, self.comm.rank, self.shard
        gbuf, pbuf = self.bufs.held
        gbuf.zero_()
        gbuf[: self.n] = torch.cat([p.grad.detach().reshape(-1) for p in self.params])
        grad = torch.empty_like(self.exp_avg)
        self.comm.reduce_scatter_tensor(grad, gbuf)
        grad /= world
        pbuf.zero_()
        pbuf[: self.n] = torch.cat([p.detach().reshape(-1) for p in self.params])
        mine = pbuf[rank * c : (rank + 1) * c].clone()
        self.t += 1
        b1, b2 = self.betas
        self.exp_avg.mul_(b1).add_(grad, alpha=1 - b1)
        self.exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = (self.exp_avg_sq / (1 - b2**self.t)).sqrt() + self.eps
        mine -= self.lr * (self.exp_avg / (1 - b1**self.t)) / denom
        self.comm.all_gather_into_tensor(pbuf, mine)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(pbuf[offset : offset + p.numel()].view_as(p))
                offset += p.numel()

    def state_numel(self):
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
