# verdict: fail
# message: is wrong after the call
# why: irecv, then adds the receive buffer before calling wait(): the data is only there once wait() returns
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    world, rank = comm.world_size, comm.rank
    if world == 1:
        return
    chunks = list(tensor.view(-1).tensor_split(world))
    right, left = (rank + 1) % world, (rank - 1) % world
    for step in range(world - 1):
        send_i, recv_i = (rank - step) % world, (rank - step - 1) % world
        incoming = torch.zeros_like(chunks[recv_i])
        reqs = [comm.isend(chunks[send_i].clone(), right), comm.irecv(incoming, left)]
        chunks[recv_i] += incoming
        for q in reqs:
            q.wait()
    for step in range(world - 1):
        send_i, recv_i = (rank - step + 1) % world, (rank - step) % world
        work = comm.isend(chunks[send_i].clone(), right)
        comm.recv(chunks[recv_i], left)
        work.wait()
