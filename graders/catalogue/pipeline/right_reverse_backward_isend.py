# verdict: pass
# why: isend for activations and gradients (waited on at the end), the shape sent ahead as a 2-element tensor, backward passes in reverse micro-batch order (GPipe's usual picture)
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    r, P = comm.rank, comm.world_size
    dev = next(stage.parameters()).device
    pending = []
    acts_in, acts_out = [], []
    for i in range(n_micro):
        if r == 0:
            x = batch.tensor_split(n_micro)[i]
        else:
            shape = torch.empty(2, dtype=torch.int64, device=dev)
            comm.recv(shape, r - 1)
            x = torch.empty(int(shape[0]), int(shape[1]), device=dev, requires_grad=True)
            with torch.no_grad():
                comm.recv(x, r - 1)
        out = stage(x)
        if r < P - 1:
            pending.append(comm.isend(torch.tensor(list(out.shape), device=dev), r + 1))
            pending.append(comm.isend(out.detach().clone(), r + 1))
        acts_in.append(x)
        acts_out.append(out)
    losses = []
    for i in reversed(range(n_micro)):
        if r == P - 1:
            loss = loss_fn(acts_out[i], target.tensor_split(n_micro)[i])
            losses.append(loss.item())
            (loss / n_micro).backward()
        else:
            g = torch.empty(acts_out[i].shape, device=dev)
            comm.recv(g, r + 1)
            torch.autograd.backward(acts_out[i], g)
        if r > 0:
            pending.append(comm.isend(acts_in[i].grad.clone(), r - 1))
    for w in pending:
        w.wait()
    return sum(losses) / n_micro if r == P - 1 else None
