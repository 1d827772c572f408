# redteam: c_all_reduce_regenerated_inputs for the collectives exercise: every rank's input rebuilt from public seeds, summed locally, nothing sent
# kind: cell
# target: rs_ag_all_reduce
# score: rs_ag_all_reduce=4
# message: rs_ag_all_reduce: not bandwidth-optimal
# why: found by the second red-team helper of stop 26 (4 -> 5): see c_all_reduce_regenerated_inputs. Since stop 27 the relayed cases' inputs are hidden (graders/_hidden.py), so no seed matches and the cell falls back to its gather-and-broadcast, which the bandwidth check's upper bound fails; the lower bound (a rank sent fewer than its n elements) is unit-tested in tests/test_collectives.py
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


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    xs = _others(tensor, W, r)
    if xs is not None:
        total = xs[0].clone()
        for x in xs[1:]:
            total += x
        tensor.copy_(total)
        return
    # the wrong answer (catalogue wrong_gather_everything): all-gather whole tensors, sum locally
    w = comm.world_size
    flat = tensor.reshape(-1).contiguous()
    everyone = torch.empty(w * flat.numel(), dtype=flat.dtype)
    comm.all_gather_into_tensor(everyone, flat)
    tensor.copy_(everyone.view(w, -1).sum(0).view_as(tensor))
