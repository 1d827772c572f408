# verdict: pass
# why: activations kept in a dict keyed by micro-batch, the row count taken from the known micro-batch size (rows = batch rows / n_micro, sent once ahead), blocking send/recv throughout
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    me, P = comm.rank, comm.world_size
    dev = next(stage.parameters()).device
    size = torch.zeros(1, dtype=torch.int64, device=dev)
    if me == 0:
        size[0] = batch.shape[0] // n_micro
    else:
        comm.recv(size, me - 1)
    if me < P - 1:
        comm.send(size, me + 1)
    rows = int(size)
    ins, outs = {}, {}
    for k in range(n_micro):
        if me == 0:
            ins[k] = batch[k * rows : (k + 1) * rows]
        else:
            ins[k] = torch.empty(rows, stage.in_features, device=dev)
            comm.recv(ins[k], me - 1)
            ins[k].requires_grad = True
        outs[k] = stage(ins[k])
        if me < P - 1:
            comm.send(outs[k].detach(), me + 1)
    total = 0.0
    for k in range(n_micro):
        if me == P - 1:
            l = loss_fn(outs[k], target[k * rows : (k + 1) * rows]) / n_micro
            total += l.item()
            l.backward()
        else:
            g = torch.empty(rows, stage.out_features, device=dev)
            comm.recv(g, me + 1)
            outs[k].backward(g)
        if me > 0:
            comm.send(ins[k].grad, me - 1)
    return total if me == P - 1 else None
