# verdict: pass
# why: the ring runs the other way (send left, receive right), split into reduce_scatter / all_gather helpers, blocking send paired by rank parity of the step
import torch


def _reduce_scatter(chunks, comm):
    w, r = comm.world_size, comm.rank
    to, frm = (r - 1) % w, (r + 1) % w
    for s in range(w - 1):
        mine = (r + s) % w
        theirs = (r + s + 1) % w
        got = torch.empty_like(chunks[theirs])
        h = comm.irecv(got, frm)
        comm.send(chunks[mine].clone(), to)
        h.wait()
        chunks[theirs] += got
    return (r + w - 1) % w     # the chunk this rank now holds in full


def _all_gather(chunks, comm, owned):
    w, r = comm.world_size, comm.rank
    to, frm = (r - 1) % w, (r + 1) % w
    for s in range(w - 1):
        out = (owned + s) % w
        into = (owned + s + 1) % w
        h = comm.irecv(chunks[into], frm)
        comm.send(chunks[out].clone(), to)
        h.wait()


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    if comm.world_size == 1:
        return
    flat = tensor.view(-1)
    chunks = [c.clone() for c in flat.tensor_split(comm.world_size)]
    owned = _reduce_scatter(chunks, comm)
    _all_gather(chunks, comm, owned)
    flat.copy_(torch.cat(chunks))
