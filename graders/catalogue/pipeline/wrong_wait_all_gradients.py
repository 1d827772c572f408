# verdict: fail
# message: the schedule is too long
# why: every stage receives all m activation gradients before its first backward, so the backward passes do not overlap across stages
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    ins, outs = [], []
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
        ins.append(x)
        outs.append(y)
    total = 0.0
    if rank == P - 1:
        for i in range(n_micro):
            loss = loss_fn(outs[i], target.chunk(n_micro)[i]) / n_micro
            total += loss.item()
            loss.backward()
    else:
        grads = []
        for y in outs:  # collect every gradient first ...
            g = torch.empty_like(y)
            comm.recv(g, rank + 1)
            grads.append(g)
        for y, g in zip(outs, grads):  # ... then run the backward passes
            y.backward(g)
    if rank > 0:
        for x in ins:
            comm.send(x.grad, rank - 1)
    return total if rank == P - 1 else None
