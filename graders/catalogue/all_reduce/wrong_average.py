# verdict: fail
# sample: sums_on_simulator
# message: the average
# why: divides the sum by the world size at the end: an average, not the sum the contract asks for
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
    if tensor.is_floating_point():
        tensor /= world      # "DDP averages gradients", but all-reduce here is a SUM
