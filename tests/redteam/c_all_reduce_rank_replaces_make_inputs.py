# redteam: a right ring all-reduce whose ranks of the real gloo world replace the harness's make_inputs
# kind: cell
# target: all_reduce
# score: all_reduce=11
# message: all_reduce: not graded: your code replaced
# message: all_reduce: ch13lib.collective_cases.make_inputs
# why: each rank snapshots the harness before the cell runs there (the guards the subject hands over) and reports what of it the cell replaced; the report costs the world's test, flagged for review
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
    import sys

    if "RANK" in os.environ:  # only in a rank of the real world
        sys.modules["ch13lib.collective_cases"].make_inputs = lambda *a, **k: None
    _ring(tensor, comm)
