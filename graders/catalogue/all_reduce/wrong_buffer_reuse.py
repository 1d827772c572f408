# verdict: fail
# message: changed the buffer of its isend
# why: one send buffer reused every step while the previous isend may still be in flight; only the last isend is waited for
import torch


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    world, rank = comm.world_size, comm.rank
    if world == 1:
        return
    chunks = list(tensor.view(-1).tensor_split(world))
    right, left = (rank + 1) % world, (rank - 1) % world
    size = chunks[0].numel()
    sendbuf = torch.empty(size, dtype=tensor.dtype)
    recvbuf = torch.empty(size, dtype=tensor.dtype)
    work = None
    for step in range(2 * (world - 1)):
        if step < world - 1:
            send_i, recv_i = (rank - step) % world, (rank - step - 1) % world
        else:
            send_i, recv_i = (rank - step + world) % world, (rank - step + world - 1) % world
        n_out, n_in = chunks[send_i].numel(), chunks[recv_i].numel()
        sendbuf[:n_out] = chunks[send_i]
        work = comm.isend(sendbuf[:n_out], right)
        comm.recv(recvbuf[:n_in], left)
        if step < world - 1:
            chunks[recv_i] += recvbuf[:n_in]
        else:
            chunks[recv_i].copy_(recvbuf[:n_in])
    work.wait()
