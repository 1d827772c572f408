# verdict: fail
# sample: bandwidth
# message: not bandwidth-optimal
# why: naive: every rank sends its whole tensor to rank 0, which sums and sends the whole result back; right sums, rank 0 sends (W-1)·n elements
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if r == 0:
        buf = torch.empty_like(tensor)
        for src in range(1, W):
            comm.recv(buf, src)
            tensor += buf
        for dst in range(1, W):
            comm.send(tensor, dst)
    else:
        comm.send(tensor, 0)
        comm.recv(tensor, 0)
