# verdict: pass
# why: the last stage runs each micro-batch's loss and backward right after its forward (as 1F1B does there) and sends the gradients with isend (a blocking send would wait for a rank still busy sending forward); the schedule still fits 2(m + P - 1)
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, world = comm.rank, comm.world_size
    is_first, is_last = rank == 0, rank == world - 1
    device = next(stage.parameters()).device
    saved, pending = [], []
    loss_sum = 0.0
    for i in range(n_micro):
        if is_first:
            x = batch.chunk(n_micro)[i]
        else:
            n = torch.zeros(1, dtype=torch.long, device=device)
            comm.recv(n, rank - 1)
            x = torch.zeros(int(n), stage.in_features, device=device)
            comm.recv(x, rank - 1)
            x.requires_grad_(True)
        y = stage(x)
        if is_last:
            loss = loss_fn(y, target.chunk(n_micro)[i]) / n_micro
            loss.backward()
            loss_sum += float(loss)
            if not is_first:
                pending.append(comm.isend(x.grad, rank - 1))
        else:
            comm.send(torch.tensor([len(y)], device=device), rank + 1)
            comm.send(y.detach(), rank + 1)
            saved.append((x, y))
    if not is_last:
        for x, y in saved:
            g = torch.zeros_like(y)
            comm.recv(g, rank + 1)
            y.backward(g)
            if not is_first:
                comm.send(x.grad, rank - 1)
    for work in pending:
        work.wait()
    return loss_sum if is_last else None
