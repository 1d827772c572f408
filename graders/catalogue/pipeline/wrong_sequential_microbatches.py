# verdict: fail
# message: the schedule is too long
# message: no two stages ever work at the same time
# message: rank 0
# fails: gpipe_schedule
# why: each micro-batch goes all the way forward and back before the next one starts: right gradients, but 2·P·m ticks instead of 2(m + P − 1)
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    total = 0.0
    for i in range(n_micro):
        if rank == 0:
            x = batch.chunk(n_micro)[i]
        else:
            n = torch.zeros(1, dtype=torch.int64)
            comm.recv(n, rank - 1)
            x = torch.empty(int(n), stage.in_features)
            comm.recv(x, rank - 1)
            x.requires_grad_()
        y = stage(x)
        if rank < P - 1:
            comm.send(torch.tensor([y.shape[0]]), rank + 1)
            comm.send(y.detach(), rank + 1)
            g = torch.empty_like(y)
            comm.recv(g, rank + 1)
            y.backward(g)
        else:
            loss = loss_fn(y, target.chunk(n_micro)[i]) / n_micro
            total += loss.item()
            loss.backward()
        if rank > 0:
            comm.send(x.grad, rank - 1)
    return total if rank == P - 1 else None
