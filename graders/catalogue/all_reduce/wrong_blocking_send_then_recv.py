# verdict: fail
# message: deadlock
# message: wait-for cycle
# why: every rank does a blocking send before its recv; with rendezvous sends (NCCL, gloo) all ranks wait forever
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if W == 1:
        return
    chunks = list(tensor.view(-1).tensor_split(W))
    for s in range(W - 1):
        inbox = torch.empty_like(chunks[(r - s - 1) % W])
        comm.send(chunks[(r - s) % W], (r + 1) % W)
        comm.recv(inbox, (r - 1) % W)
        chunks[(r - s - 1) % W] += inbox
    for s in range(W - 1):
        comm.send(chunks[(r - s + 1) % W], (r + 1) % W)
        comm.recv(chunks[(r - s) % W], (r - 1) % W)
