# verdict: pass
# why: helper functions, irecv + wait for the activations, tensor_split, the micro-batch size computed once; losses averaged with a tensor accumulator
import torch


def _recv_rows(comm, src, width, device):
    n = torch.empty(1, dtype=torch.int64, device=device)
    comm.irecv(n, src).wait()
    buf = torch.empty(int(n.item()), width, device=device)
    comm.irecv(buf, src).wait()
    return buf


def _send_rows(comm, t, dst):
    comm.send(torch.tensor([t.shape[0]], dtype=torch.int64, device=t.device), dst)
    comm.send(t.detach().contiguous(), dst)


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    device = next(stage.parameters()).device
    micro = batch.tensor_split(n_micro) if batch is not None else [None] * n_micro
    targets = target.tensor_split(n_micro) if target is not None else [None] * n_micro
    record = []
    for i in range(n_micro):
        x = micro[i] if rank == 0 else _recv_rows(comm, rank - 1, stage.in_features, device).requires_grad_()
        y = stage(x)
        if rank + 1 < P:
            _send_rows(comm, y, rank + 1)
        record.append((x, y))
    mean = torch.zeros((), dtype=torch.float64)
    for i, (x, y) in enumerate(record):
        if rank + 1 == P:
            loss = loss_fn(y, targets[i])
            mean += loss.detach().double() / n_micro
            (loss * (1.0 / n_micro)).backward()
        else:
            g = torch.empty_like(y)
            comm.recv(g, rank + 1)
            y.backward(gradient=g)
        if rank > 0:
            comm.send(x.grad, rank - 1)
    return mean.item() if rank + 1 == P else None
