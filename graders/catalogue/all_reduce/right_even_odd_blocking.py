# verdict: pass
# why: blocking send/recv only; even ranks send first, odd ranks receive first, so the rendezvous sends never form a cycle
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    w, r = comm.world_size, comm.rank
    if w == 1:
        return
    parts = list(tensor.view(-1).tensor_split(w))
    nxt, prv = (r + 1) % w, (r - 1) % w

    def exchange(out, inp):
        if r % 2 == 0:
            comm.send(out, nxt)
            comm.recv(inp, prv)
        else:
            comm.recv(inp, prv)
            comm.send(out, nxt)

    for s in range(w - 1):
        tmp = torch.empty_like(parts[(r - s - 1) % w])
        exchange(parts[(r - s) % w].clone(), tmp)
        parts[(r - s - 1) % w].add_(tmp)
    for s in range(w - 1):
        tmp = torch.empty_like(parts[(r - s) % w])
        exchange(parts[(r - s + 1) % w].clone(), tmp)
        parts[(r - s) % w].copy_(tmp)
