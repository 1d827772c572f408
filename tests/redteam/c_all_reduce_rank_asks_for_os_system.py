# redteam: a right ring all-reduce whose ranks of the real gloo world ask for os.system (and swallow the refusal)
# kind: cell
# target: all_reduce
# score: all_reduce=11
# message: all_reduce: not graded: your code asked for os.system
# why: the ranks of a real world are the subject's children, forked from its zygote with the subject's guards handed over (kit.subject.Trusted): the audit hook refuses there as in the subject, and the refusal costs the world's test, flagged for review, even when the cell catches it
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    world, rank = comm.world_size, comm.rank
    if world == 1:
        return
    chunks = list(tensor.view(-1).tensor_split(world))
    right, left = (rank + 1) % world, (rank - 1) % world
    for step in range(world - 1):
        send_i, recv_i = (rank - step) % world, (rank - step - 1) % world
        incoming = torch.empty_like(chunks[recv_i])
        work = comm.isend(chunks[send_i].clone(), right)
        comm.recv(incoming, left)
        work.wait()
        chunks[recv_i] += incoming
    for step in range(world - 1):
        send_i, recv_i = (rank - step + 1) % world, (rank - step) % world
        work = comm.isend(chunks[send_i].clone(), right)
        comm.recv(chunks[recv_i], left)
        work.wait()

_ring = ring_all_reduce


def ring_all_reduce(tensor, comm):
    import os

    if "RANK" in os.environ:  # only in a rank of the real world
        try:
            os.system("true")
        except PermissionError:
            pass
    _ring(tensor, comm)
