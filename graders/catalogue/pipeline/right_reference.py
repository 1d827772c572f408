# verdict: pass
# why: the notebook's reference: all forwards (each micro-batch passed on at once, its row count sent ahead), then all backwards in order, the activation gradients sent back; losses scaled by 1/n_micro
import torch


def gpipe_step(stage, batch, target, n_micro, comm, loss_fn):
    """集合操作: 本 rank 所负责阶段的一次 GPipe 训练步; 最后一个 rank 返回平均损失, 其他 rank 返回 None。

    Collective: one GPipe step of this rank's stage; the mean loss on the last rank, None elsewhere.
    """
    rank, P = comm.rank, comm.world_size
    first, last = rank == 0, rank == P - 1
    device = next(stage.parameters()).device
    xs = list(batch.chunk(n_micro)) if first else None
    ts = list(target.chunk(n_micro)) if last else None
    inputs, outputs = [], []
    for i in range(n_micro):  # forward: micro-batch i goes on as soon as it is done
        if first:
            x = xs[i]
        else:
            rows = torch.zeros(1, dtype=torch.int64, device=device)
            comm.recv(rows, rank - 1)
            x = torch.empty(int(rows.item()), stage.in_features, device=device)
            comm.recv(x, rank - 1)
            x.requires_grad_()  # so that x.grad is what the previous stage needs
        y = stage(x)
        if not last:
            comm.send(torch.tensor([y.shape[0]], device=device), rank + 1)
            comm.send(y.detach().contiguous(), rank + 1)
        inputs.append(x)
        outputs.append(y)
    total = 0.0
    for i in range(n_micro):  # backward, as the gradients arrive
        if last:
            loss = loss_fn(outputs[i], ts[i]) / n_micro
            total += loss.item()
            loss.backward()
        else:
            grad = torch.empty_like(outputs[i])
            comm.recv(grad, rank + 1)
            outputs[i].backward(grad)
        if not first:
            comm.send(inputs[i].grad.contiguous(), rank - 1)
    return total if last else None
