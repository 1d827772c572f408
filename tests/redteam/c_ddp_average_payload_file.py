# redteam: at world size 1 nothing to do; in a real world every rank reads the hidden seeds from the launcher's payload file (ch13-world-*/payload.json under the temp folder), rebuilds the whole batch and writes the full-batch gradient, with no communication
# kind: cell
# target: ddp_average
# score: ddp_average=0
# message: ddp_average: StopIteration
# why: found while closing c_ddp_average_seed_search (stop 33: 5/5 with hidden seeds, honest 0): a real world's payload, with every rank's hidden values, stayed readable while the cells ran. Every rank now removes it once all have read it (a barrier after init_process_group), before any cell runs
import copy

import torch
from torch import nn

_models = []  # [model, seed, batch, steps done]


def _initial(seed, d_in, hidden, frozen):
    state = torch.default_generator.get_state()
    torch.default_generator.manual_seed(seed)
    layers = [nn.Linear(d_in, d_in), nn.Linear(d_in, hidden), nn.Linear(hidden, 1)]
    torch.default_generator.set_state(state)
    return layers[0].weight.detach().double()


def _batch(seed, size, d_in, step):
    g = torch.Generator().manual_seed(seed + 1)
    for _ in range(step + 1):
        x = torch.randn(size, d_in, generator=g, dtype=torch.float64)
        y = torch.randn(size, 1, generator=g, dtype=torch.float64)
    return x, y


def _grads(model, x, y):
    twin = copy.deepcopy(model)
    for p in twin.parameters():
        p.grad = None
    nn.functional.mse_loss(twin(x), y).backward()
    return [p.grad for p in twin.parameters()]


def average_gradients(model):
    import torch.distributed as dist

    world, rank = dist.get_world_size(), dist.get_rank()
    if world == 1:
        return  # one rank: its own gradient is the average
    params = list(model.parameters())
    w0 = params[0]
    d_in, hidden = w0.shape[1], params[2].shape[0]
    entry = next((e for e in _models if e[0] is model), None)
    if entry is None:
        import glob, json, tempfile
        scenarios = []
        for path in glob.glob(tempfile.gettempdir() + "/ch13-world-*/payload.json"):  # the launcher's payload
            with open(path) as f:
                scenarios += json.load(f)["payload"].get("scenarios", [])
        seed = next(sc["seed"] for sc in scenarios if torch.equal(_initial(sc["seed"], d_in, hidden, False), w0.detach()))
        entry = [model, seed, None, 0]
        _models.append(entry)
    _, seed, size, step = entry
    local = [p.grad for p in params]
    if size is None:
        for size in range(world, 257, world):
            shard = size // world
            x, y = _batch(seed, size, d_in, step)
            mine = _grads(model, x[rank * shard:(rank + 1) * shard], y[rank * shard:(rank + 1) * shard])
            if all((a is None) == (b is None) and (a is None or torch.allclose(a, b)) for a, b in zip(local, mine)):
                break
        entry[2] = size
    x, y = _batch(seed, size, d_in, step)
    full = _grads(model, x, y)
    for p, g in zip(params, full):
        if p.grad is not None:
            p.grad.copy_(g)
    entry[3] += 1
