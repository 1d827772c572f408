# verdict: pass
# why: keeps the padded communication buffer between calls in a module-level cache keyed by (size, dtype, device); in-place reduce-scatter / all-gather on it. Each rank of a real world is a process with its own cache; the threads world gave all ranks one module and failed it, 3/5 (an honest-student helper); now every rank runs its own copy of the cell
import torch

_bufs = {}


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    n = tensor.numel()
    c = (n + W - 1) // W
    key = (W * c, tensor.dtype, str(tensor.device))
    if key not in _bufs:
        _bufs[key] = torch.empty(W * c, dtype=tensor.dtype, device=tensor.device)
    buf = _bufs[key]
    buf.zero_()
    buf[:n] = tensor.reshape(-1)
    shard = buf[r * c:(r + 1) * c]
    comm.reduce_scatter_tensor(shard, buf)
    comm.all_gather_into_tensor(buf, shard)
    tensor.view(-1).copy_(buf[:n])
