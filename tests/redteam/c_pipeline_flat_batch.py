# redteam: plain model parallelism (the catalogue's wrong_whole_batch) that feeds the stage the whole batch as one (1, B, d) tensor, which the clock charged as one row, then charges the rest of the batch's work on zeros after its last message
# kind: cell
# target: pipeline
# score: pipeline=9
# message: pipeline: the schedule is too long
# why: found by the seventh red-team helper (stop 27: 9 -> 12/12, no flag): TimedStage charged x.shape[0] rows, and the schedule check asked only for the whole batch's worth of charges, at any time. A stage now charges x.numel() // in_features rows, and the charges must follow the data (c_pipeline_charges_before_data)
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    # plain model parallelism: the whole batch through each stage at once (no micro-batches),
    # fed to the stage as a (1, B, d) tensor
    rank, P = comm.rank, comm.world_size
    if rank == 0:
        x = batch.unsqueeze(0)
    else:
        n = torch.zeros(1, dtype=torch.int64)
        comm.recv(n, rank - 1)
        x = torch.empty(1, int(n), stage.in_features)
        comm.recv(x, rank - 1)
        x.requires_grad_()
    y = stage(x)
    rows = y.shape[1]
    if rank < P - 1:
        comm.send(torch.tensor([rows]), rank + 1)
        comm.send(y.detach().contiguous(), rank + 1)
        g = torch.empty_like(y)
        comm.recv(g, rank + 1)
        y.backward(g)
        loss = None
    else:
        loss = loss_fn(y.squeeze(0), target)
        loss.backward()
    if rank > 0:
        comm.send(x.grad.contiguous(), rank - 1)
    # the rest of the work, after the last message
    n_rows = rows - 1
    if n_rows > 0:
        d = stage(torch.zeros(n_rows, stage.in_features))
        (d * 0).sum().backward()
    return loss.item() if loss is not None else None
