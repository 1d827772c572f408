# verdict: fail
# message: not bandwidth-optimal
# why: passes the whole tensor around the ring W-1 times and adds each arrival: right sums, but every rank sends (W-1)·n elements
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    world, rank = comm.world_size, comm.rank
    travelling = tensor.clone()
    for _ in range(world - 1):
        incoming = torch.empty_like(tensor)
        work = comm.isend(travelling, (rank + 1) % world)
        comm.recv(incoming, (rank - 1) % world)
        work.wait()
        tensor += incoming
        travelling = incoming
