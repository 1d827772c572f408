# verdict: fail
# sample: gradients_and_loss
# message: ranks are ints 0..0
# why: written for P = 2: rank 0 always sends to rank 1 and every other rank is treated as the last stage (P = 1 and P > 2 break)
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    if comm.rank == 0:
        outs = []
        for x in batch.chunk(n_micro):
            y = stage(x)
            comm.send(torch.tensor([y.shape[0]]), 1)
            comm.send(y.detach(), 1)
            outs.append(y)
        for y in outs:
            g = torch.empty_like(y)
            comm.recv(g, 1)
            y.backward(g)
        return None
    ins, outs = [], []
    for _ in range(n_micro):
        n = torch.zeros(1, dtype=torch.int64)
        comm.recv(n, 0)
        x = torch.empty(int(n), stage.in_features, requires_grad=True)
        with torch.no_grad():
            comm.recv(x, 0)
        ins.append(x)
        outs.append(stage(x))
    total = 0.0
    for x, y, t in zip(ins, outs, target.chunk(n_micro)):
        loss = loss_fn(y, t) / n_micro
        total += loss.item()
        loss.backward()
        comm.send(x.grad, 0)
    return total
