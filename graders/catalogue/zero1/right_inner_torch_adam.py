# verdict: pass
# why: the way real ZeRO-1 is built (torch's ZeroRedundancyOptimizer wraps a local optimizer): a torch.optim.Adam over an nn.Parameter holding this rank's shard only, fed the reduce-scattered mean. Found by an honest-student helper: 0/10, because a subject inherited the judge's TORCHINDUCTOR_CACHE_DIR, which it may not write; the sandbox now gives every job its own
import torch


class ZeroAdam:
    """ZeRO-1: a torch.optim.Adam over this rank's shard only."""

    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.comm = comm
        W, r = comm.world_size, comm.rank
        self.numel = sum(p.numel() for p in self.params)
        self.chunk = (self.numel + W - 1) // W
        with torch.no_grad():
            flat = torch.cat([p.detach().reshape(-1) for p in self.params])
            flat = torch.cat([flat, flat.new_zeros(W * self.chunk - self.numel)])
            self.shard = torch.nn.Parameter(flat[r * self.chunk:(r + 1) * self.chunk].clone())
        self.inner = torch.optim.Adam([self.shard], lr=lr, betas=betas, eps=eps)

    def step(self):
        W = self.comm.world_size
        g = torch.cat([p.grad.reshape(-1) for p in self.params])
        g = torch.cat([g, g.new_zeros(W * self.chunk - self.numel)])
        mine = torch.empty(self.chunk, dtype=g.dtype, device=g.device)
        self.comm.reduce_scatter_tensor(mine, g)
        self.shard.grad = mine / W
        self.inner.step()
        full = torch.empty(W * self.chunk, dtype=g.dtype, device=g.device)
        self.comm.all_gather_into_tensor(full, self.shard.detach().contiguous())
        with torch.no_grad():
            off = 0
            for p in self.params:
                p.copy_(full[off:off + p.numel()].view_as(p))
                off += p.numel()

    def state_dict(self):
        """The inner Adam's state_dict: this rank's shard's exp_avg, exp_avg_sq and step."""
        return self.inner.state_dict()

    def load_state_dict(self, state):
        self.inner.load_state_dict(state)

    def state_numel(self):
        st = self.inner.state.get(self.shard, {})
        return sum(st[k].numel() for k in ("exp_avg", "exp_avg_sq") if k in st)
