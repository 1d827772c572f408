# verdict: pass
# why: keeps the partial-output buffer between calls in a module-level cache keyed by (shape, dtype, device), fills it with matmul(out=), all-reduces it in place, returns a fresh y = buffer + b2. Each rank of a real world is a process with its own cache; the threads world gave all ranks one module and failed it, 4/8 (an honest-student helper); now every rank runs its own copy of the cell
import torch
import torch.nn.functional as F

_partial = {}


def tp_mlp(x, w1, b1, w2, b2, comm):
    shape = tuple(x.shape[:-1]) + (w2.shape[1],)
    key = (shape, x.dtype, str(x.device))
    if key not in _partial:
        _partial[key] = torch.empty(shape, dtype=x.dtype, device=x.device)
    buf = _partial[key]
    torch.matmul(F.gelu(x @ w1 + b1), w2, out=buf)
    if comm.world_size > 1:
        comm.all_reduce(buf)
    return buf + b2
