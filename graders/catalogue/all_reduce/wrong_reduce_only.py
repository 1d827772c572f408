# verdict: fail
# message: that is a reduce, not an all-reduce
# why: a ring reduce-scatter, then every rank sends its finished chunk to rank 0 only: a Reduce, not an AllReduce
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
    mine = (rank + 1) % world
    if rank == 0:
        for src in range(1, world):
            comm.recv(chunks[(src + 1) % world], src)
    else:
        comm.send(chunks[mine].clone(), 0)
