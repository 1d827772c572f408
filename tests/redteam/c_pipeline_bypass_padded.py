# redteam: plain model parallelism whose real work runs on the module inside the stage (found through stage.children(): nothing charged), and which pays the clock after its last message with one call of the stage on zeros of the batch's size
# kind: cell
# target: pipeline
# score: pipeline=9
# message: pipeline: when its stage's forward had run on only 0
# why: found by the seventh red-team helper (stop 27: 9 -> 12/12, no flag): the check that every stage did the whole batch's work (the catalogue's wrong_bypasses_the_stage) could be paid with dummy work at any time. Activations sent before the stage's forward ran on them now fail (parallel_cases.dataflow_problem)
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    # plain model parallelism (the whole batch at once) through the module inside the stage
    # (no clock charges); the stage itself is then called on zeros, after the last message,
    # for as many rows forward and backward as the batch has
    rank, P = comm.rank, comm.world_size
    kids = list(stage.children())
    inner = kids[0] if kids and list(kids[0].children()) else stage  # the module a wrapper holds
    if rank == 0:
        x = batch
    else:
        n = torch.zeros(1, dtype=torch.int64)
        comm.recv(n, rank - 1)
        x = torch.empty(int(n), stage.in_features)
        comm.recv(x, rank - 1)
        x.requires_grad_()
    y = inner(x)
    rows = y.shape[0]
    if rank < P - 1:
        comm.send(torch.tensor([rows]), rank + 1)
        comm.send(y.detach().contiguous(), rank + 1)
        g = torch.empty_like(y)
        comm.recv(g, rank + 1)
        y.backward(g)
        loss = None
    else:
        loss = loss_fn(y, target)
        loss.backward()
    if rank > 0:
        comm.send(x.grad.contiguous(), rank - 1)
    d = stage(torch.zeros(rows, stage.in_features))
    (d * 0).sum().backward()
    return loss.item() if loss is not None else None
