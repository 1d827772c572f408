# verdict: fail
# message: world size 1
# message: itself
# why: posts the first irecv from the left neighbour before the loop; at world size 1 the left neighbour is the rank itself
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    world, rank = comm.world_size, comm.rank
    chunks = list(tensor.view(-1).tensor_split(world))
    right, left = (rank + 1) % world, (rank - 1) % world
    incoming = torch.empty_like(chunks[(rank - 1) % world])
    pending = comm.irecv(incoming, left)
    for step in range(world - 1):
        send_i, recv_i = (rank - step) % world, (rank - step - 1) % world
        work = comm.isend(chunks[send_i].clone(), right)
        pending.wait()
        work.wait()
        chunks[recv_i] += incoming
        if step < world - 2:
            incoming = torch.empty_like(chunks[(rank - step - 2) % world])
            pending = comm.irecv(incoming, left)
    for step in range(world - 1):
        send_i, recv_i = (rank - step + 1) % world, (rank - step) % world
        work = comm.isend(chunks[send_i].clone(), right)
        comm.recv(chunks[recv_i], left)
        work.wait()
