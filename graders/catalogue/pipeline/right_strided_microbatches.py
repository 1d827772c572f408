# verdict: pass
# why: micro-batch i is the strided rows batch[i::n_micro] (equal sizes, so the same mean loss and full-batch step). Found by an honest-student helper: 9/12, the schedule's data-flow check matched gradient rows up to a scale factor, and in a two-wide layer the rows of one batch can be parallel, so one row counted as two; rows are now found by value, each run of a message counting for one row at most
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    dev = next(stage.parameters()).device
    ins, outs = [], []
    for i in range(n_micro):
        if rank == 0:
            x = batch[i::n_micro]
        else:
            n = torch.zeros(1, dtype=torch.int64, device=dev)
            comm.recv(n, rank - 1)
            x = torch.empty(int(n), stage.in_features, device=dev)
            comm.recv(x, rank - 1)
            x.requires_grad_()
        y = stage(x)
        if rank < P - 1:
            comm.send(torch.tensor([y.shape[0]], device=dev), rank + 1)
            comm.send(y.detach().contiguous(), rank + 1)
        ins.append(x)
        outs.append(y)
    total = 0.0
    for i in range(n_micro):
        if rank == P - 1:
            loss = loss_fn(outs[i], target[i::n_micro]) / n_micro
            total += loss.item()
            loss.backward()
        else:
            g = torch.empty_like(outs[i])
            comm.recv(g, rank + 1)
            outs[i].backward(g)
        if rank > 0:
            comm.send(ins[i].grad.contiguous(), rank - 1)
    return total if rank == P - 1 else None
