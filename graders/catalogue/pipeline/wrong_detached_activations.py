# verdict: fail
# message: this stage got no gradient
# why: the received activations do not require grad, so x.grad is None and a zero gradient is sent back: the earlier stages never get a gradient
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
        y = stage(x)
        if rank < P - 1:
            comm.send(torch.tensor([y.shape[0]]), rank + 1)
            comm.send(y.detach(), rank + 1)
        ins.append(x)
        outs.append(y)
    total = 0.0
    for i in range(n_micro):
        if rank == P - 1:
            loss = loss_fn(outs[i], target.chunk(n_micro)[i]) / n_micro
            total += loss.item()
            loss.backward()
        else:
            g = torch.empty_like(outs[i])
            comm.recv(g, rank + 1)
            if outs[i].requires_grad:
                outs[i].backward(g)
        if rank > 0:
            comm.send(ins[i].grad if ins[i].grad is not None else torch.zeros_like(ins[i]), rank - 1)
    return total if rank == P - 1 else None
