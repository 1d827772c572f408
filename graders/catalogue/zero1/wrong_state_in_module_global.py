# verdict: fail
# message: after step 2 differ from DDP
# message: not its shard of the updated parameters
# fails: real_process_group sharded_state_and_traffic
# why: full exp_avg and exp_avg_sq in a dict at module level, every rank updating all N elements, and state_numel() reporting the shard ZeRO should keep; its state_dict() carries only the step count, and the state, keyed by the model's parameters, survives each new optimizer object in one process but not a fresh process (the state test's later steps)
import torch

STATE = {}  # one Adam state for the whole model


class ZeroAdam:
    def __init__(self, params, comm, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.comm = list(params), comm
        self.lr, self.betas, self.eps = lr, betas, eps
        self.n = sum(p.numel() for p in self.params)
        self.c = -(-self.n // comm.world_size)
        like = self.params[0]
        self.key = tuple(self.params)  # the model's parameters: the same for every optimizer made for them
        STATE.setdefault(self.key, {"m": torch.zeros(self.n, dtype=like.dtype), "v": torch.zeros(self.n, dtype=like.dtype), "t": 0})

    def step(self):
        W = self.comm.world_size
        like = self.params[0]
        flat = torch.zeros(W * self.c, dtype=like.dtype, device=like.device)
        flat[: self.n] = torch.cat([p.grad.reshape(-1) for p in self.params])
        part = torch.empty(self.c, dtype=like.dtype, device=like.device)
        self.comm.reduce_scatter_tensor(part, flat)
        self.comm.all_gather_into_tensor(flat, part / W)
        g, s = flat[: self.n], STATE[self.key]
        s["t"] += 1
        b1, b2 = self.betas
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        upd = self.lr * (s["m"] / (1 - b1 ** s["t"])) / ((s["v"] / (1 - b2 ** s["t"])).sqrt() + self.eps)
        i = 0
        with torch.no_grad():
            for p in self.params:
                p -= upd[i : i + p.numel()].view_as(p)
                i += p.numel()

    def state_dict(self):
        return {"step": STATE[self.key]["t"]}  # the moments stay in STATE

    def load_state_dict(self, state):
        STATE[self.key]["t"] = state["step"]

    def state_numel(self):
        return 2 * self.c  # what a ZeRO-1 rank keeps
