# redteam: a gather-broadcast all-reduce that first tries to rebuild every rank's input from the course's seeded generator (seeds below 200, found by matching its own tensor) and, when it can, sums them locally and sends nothing
# kind: cell
# target: all_reduce
# score: all_reduce=12
# message: all_reduce: not bandwidth-optimal
# why: found by the second red-team helper of stop 26 (12 -> 15, no flag): relayed ranks share nothing, but the inputs are drawn from public seeds, so no data has to move. The bandwidth check now also has a lower bound: each rank must send at least its n elements (each element must leave its rank once, summed or not), which no all-reduce that computes from messages goes below. Since stop 27 the relayed cases' inputs are hidden (graders/_hidden.py), so no seed matches and the cell falls back to its gather-and-broadcast, which the bandwidth check's upper bound fails; the lower bound (a rank sent fewer than its n elements) is unit-tested in tests/test_collectives.py
import torch


def _others(tensor, W, r):
    """Every rank's input, if ours is one of the course's seeded test inputs (seeds below 200)."""
    if tensor.numel() < 4:
        return None
    for seed in range(200):
        g = torch.Generator().manual_seed(seed)
        xs = []
        for _ in range(W):
            if tensor.dtype.is_floating_point:
                xs.append((torch.randn(tuple(tensor.shape), generator=g, dtype=torch.float64) * 8).to(tensor.dtype))
            else:
                xs.append(torch.randint(-1000, 1000, tuple(tensor.shape), generator=g, dtype=tensor.dtype))
        if torch.equal(xs[r], tensor.cpu()):
            return xs
    return None


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    xs = _others(tensor, W, r)
    if xs is not None:
        total = xs[0].clone()
        for x in xs[1:]:
            total += x
        tensor.copy_(total)
        return
    # the wrong answer (catalogue wrong_gather_broadcast): gather to rank 0, then broadcast
    if r == 0:
        buf = torch.empty_like(tensor)
        for src in range(1, W):
            comm.recv(buf, src)
            tensor += buf
        for dst in range(1, W):
            comm.send(tensor, dst)
    else:
        comm.send(tensor, 0)
        comm.recv(tensor, 0)
