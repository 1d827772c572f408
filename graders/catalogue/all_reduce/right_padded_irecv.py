# verdict: pass
# why: pads to W·⌈n/W⌉ and works on rows of a (W, c) buffer; irecv and isend both non-blocking, waited together
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    world, rank = comm.world_size, comm.rank
    n = tensor.numel()
    c = -(-n // world)
    buf = torch.zeros(world * c, dtype=tensor.dtype, device=tensor.device)
    buf[:n] = tensor.reshape(-1)
    rows = buf.view(world, c)
    right, left = (rank + 1) % world, (rank - 1) % world
    incoming = torch.empty(c, dtype=tensor.dtype, device=tensor.device)
    for step in range(world - 1):
        out = rows[(rank - step) % world].clone()
        reqs = [comm.irecv(incoming, left), comm.isend(out, right)]
        for q in reqs:
            q.wait()
        rows[(rank - step - 1) % world] += incoming
    for step in range(world - 1):
        out = rows[(rank - step + 1) % world].clone()
        reqs = [comm.isend(out, right), comm.irecv(incoming, left)]
        for q in reqs:
            q.wait()
        rows[(rank - step) % world] = incoming
    tensor.copy_(buf[:n].view_as(tensor))
