# verdict: pass
# why: keeps its send/recv staging buffers between calls in a module-level cache keyed by (size, dtype, device), as real NCCL code does to avoid re-allocating every call; isend from the staging buffer, blocking recv, wait. Each rank of a real world is a process with its own cache; the threads world gave all ranks one module and failed it, 9/15 (an honest-student helper); now every rank runs its own copy of the cell
import torch

_workspace = {}


def _staging(numel, like, tag):
    key = (tag, numel, like.dtype, str(like.device))
    buf = _workspace.get(key)
    if buf is None:
        buf = torch.empty(numel, dtype=like.dtype, device=like.device)
        _workspace[key] = buf
    return buf


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if W == 1:
        return
    chunks = tensor.view(-1).tensor_split(W)
    right, left = (r + 1) % W, (r - 1) % W
    for phase in ("reduce", "gather"):
        for step in range(W - 1):
            if phase == "reduce":
                out_i, in_i = (r - step) % W, (r - step - 1) % W
            else:
                out_i, in_i = (r - step + 1) % W, (r - step) % W
            sbuf = _staging(chunks[out_i].numel(), tensor, "send")
            rbuf = _staging(chunks[in_i].numel(), tensor, "recv")
            sbuf.copy_(chunks[out_i])
            req = comm.isend(sbuf, right)
            comm.recv(rbuf, left)
            req.wait()
            if phase == "reduce":
                chunks[in_i].add_(rbuf)
            else:
                chunks[in_i].copy_(rbuf)
