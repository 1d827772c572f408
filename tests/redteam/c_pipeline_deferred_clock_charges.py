# redteam: GPipe done one micro-batch at a time (forward and back before the next) whose relayed ranks move the stage's clock charges out of RemoteComm's queue of held-back calls and send them all after the last send, so every send is dated tick 0
# kind: cell
# target: pipeline
# score: pipeline=9
# message: pipeline: the schedule is too long
# why: found by the second red-team helper of stop 26 (9 -> 12/12, no flag): a clock charge needed no answer, so it waited in the rank's public list of held-back calls, where the cell could reorder it. A charge is now sent at once, with the calls before it (procgroup.RemoteComm._advance), and the list is private
import torch


def _hold(comm, held):
    # calls not yet sent to the broker (a relayed world's comm only): keep the clock charges back
    try:
        posted = comm.posted
    except AttributeError:
        return
    keep = [c for c in posted if c.get("call") != "advance"]
    held.extend(c for c in posted if c.get("call") == "advance")
    posted[:] = keep


def _release(comm, held):
    try:
        comm.posted.extend(held)
    except AttributeError:
        pass


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    held = []
    total = 0.0
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
        _hold(comm, held)
        if rank < P - 1:
            comm.send(torch.tensor([y.shape[0]]), rank + 1)
            comm.send(y.detach(), rank + 1)
            g = torch.empty_like(y)
            comm.recv(g, rank + 1)
            y.backward(g)
        else:
            loss = loss_fn(y, target.chunk(n_micro)[i]) / n_micro
            total += loss.item()
            loss.backward()
        _hold(comm, held)
        if rank > 0:
            comm.send(x.grad, rank - 1)
    _release(comm, held)
    return total if rank == P - 1 else None
