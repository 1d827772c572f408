# verdict: pass
# why: backpropagates each micro-batch's unscaled loss and divides this call's gradient increment by n_micro at the end (before + (grad - before) / m): the same math as scaling each micro-batch's loss, so the gradients it sends are m times the mean loss's. Found by a white-box red-team helper: 9/12, its schedule rejected as 'a stage run on other data', because gradient rows were matched by the mean loss's values only
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    rank, P = comm.rank, comm.world_size
    first, last = rank == 0, rank == P - 1
    device = next(stage.parameters()).device
    params = list(stage.parameters())
    before = [None if p.grad is None else p.grad.detach().clone() for p in params]
    xs = list(batch.chunk(n_micro)) if first else None
    ts = list(target.chunk(n_micro)) if last else None
    inputs, outputs = [], []
    for i in range(n_micro):
        if first:
            x = xs[i]
        else:
            rows = torch.zeros(1, dtype=torch.int64, device=device)
            comm.recv(rows, rank - 1)
            x = torch.empty(int(rows.item()), stage.in_features, device=device)
            comm.recv(x, rank - 1)
            x.requires_grad_()
        y = stage(x)
        if not last:
            comm.send(torch.tensor([y.shape[0]], device=device), rank + 1)
            comm.send(y.detach().contiguous(), rank + 1)
        inputs.append(x)
        outputs.append(y)
    total = 0.0
    for i in range(n_micro):
        if last:
            loss = loss_fn(outputs[i], ts[i])  # the micro-batch's mean; the 1/m comes at the end
            total += loss.item()
            loss.backward()
        else:
            g = torch.empty_like(outputs[i])
            comm.recv(g, rank + 1)
            outputs[i].backward(g)
        if not first:
            comm.send(inputs[i].grad.contiguous(), rank - 1)
    with torch.no_grad():
        for p, b in zip(params, before):
            if p.grad is None:
                continue
            if b is None:
                p.grad.div_(n_micro)
            else:
                p.grad.sub_(b).div_(n_micro).add_(b)
    return total / n_micro if last else None
