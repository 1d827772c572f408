# verdict: pass
# why: explicit start/stop offsets instead of tensor_split, copies into a working buffer, blocking recv after isend
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    work = tensor.detach().reshape(-1).clone()
    n = work.numel()
    base, extra = divmod(n, W)
    bounds = []
    start = 0
    for i in range(W):
        size = base + (1 if i < extra else 0)
        bounds.append((start, start + size))
        start += size

    def seg(i):
        a, b = bounds[i % W]
        return work[a:b]

    for s in range(W - 1):
        h = comm.isend(seg(r - s).clone(), (r + 1) % W)
        inbox = torch.empty_like(seg(r - s - 1))
        comm.recv(inbox, (r - 1) % W)
        h.wait()
        seg(r - s - 1).add_(inbox)
    for s in range(W - 1):
        h = comm.isend(seg(r - s + 1).clone(), (r + 1) % W)
        inbox = torch.empty_like(seg(r - s))
        comm.recv(inbox, (r - 1) % W)
        h.wait()
        seg(r - s).copy_(inbox)
    tensor.copy_(work.view_as(tensor))
