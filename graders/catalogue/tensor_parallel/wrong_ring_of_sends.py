# verdict: fail
# message: point-to-point messages are not needed
# why: sums the partial outputs by passing them around a ring with send/recv: right numbers, not the one all_reduce of the contract
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    mine = (F.gelu(x @ w1 + b1) @ w2).contiguous()
    total = mine.clone()
    W, r = comm.world_size, comm.rank
    passing = mine.clone()
    for _ in range(W - 1):
        incoming = torch.empty_like(passing)
        work = comm.isend(passing, (r + 1) % W)
        comm.recv(incoming, (r - 1) % W)
        work.wait()
        total += incoming
        passing = incoming
    return total + b2
