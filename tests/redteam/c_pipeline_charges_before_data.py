# redteam: a GPipe step that runs one micro-batch all the way forward and back before the next (the catalogue's wrong_sequential_microbatches) and hides it from the logical clock: each rank charges its stage's forward and backward on a tensor of zeros before the micro-batch's data (or gradient) arrives, and does the real work by hand with stage.parameters()
# kind: cell
# target: pipeline
# score: pipeline=9
# message: pipeline: while it had received activations from rank 0 for only 0
# why: found by the lead (stop 27: 9 -> 12/12, no introspection, no flag): the clock charged a stage's work whenever the stage was called, on any data, so charges made early let a sequential schedule look pipelined. The judge, as the relayed world's broker, now records each rank's data flow (procgroup.SimWorld.flow) and parallel_cases.dataflow_problem holds every charge to the data: a forward on no more rows than the activations received, a backward on no more than the gradients received (rows found by value), and no activations (gradients) sent before the forward (backward) ran on them
import torch
import torch.nn.functional as F


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    first, last = rank == 0, rank == P - 1
    W, b = list(stage.parameters())
    sizes = torch.zeros(n_micro, dtype=torch.int64)  # every micro-batch's rows, told once up front
    if first:
        sizes = torch.tensor([c.shape[0] for c in batch.chunk(n_micro)])
    else:
        comm.recv(sizes, rank - 1)
    if not last:
        comm.send(sizes, rank + 1)
    total = 0.0
    for i in range(n_micro):  # one micro-batch all the way forward and back before the next
        rows = int(sizes[i])
        # the stage's clock charges, made early on a dummy input: the forward before its input arrives,
        # the backward before its gradient does
        dummy = stage(torch.zeros(rows, stage.in_features))
        dummy.backward(torch.zeros_like(dummy))
        if first:
            x = batch.chunk(n_micro)[i]
        else:
            x = torch.empty(rows, stage.in_features)
            comm.recv(x, rank - 1)
            x.requires_grad_()
        y = F.linear(x, W, b)  # the real work, by hand: no charge
        if not last:
            y = torch.tanh(y)
            comm.send(y.detach(), rank + 1)
            g = torch.empty_like(y)
            comm.recv(g, rank + 1)
            y.backward(g)
        else:
            loss = loss_fn(y, target.chunk(n_micro)[i]) / n_micro
            total += loss.item()
            loss.backward()
        if not first:
            comm.send(x.grad, rank - 1)
    return total if last else None
