# verdict: fail
# message: the schedule is too long
# why: ignores n_micro: the whole batch goes through each stage at once (plain model parallelism), so only one stage ever works: right gradients, 2·P·m ticks
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    if rank == 0:
        x = batch
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
        loss = None
    else:
        loss = loss_fn(y, target)
        loss.backward()
    if rank > 0:
        comm.send(x.grad, rank - 1)
    return loss.item() if loss is not None else None
