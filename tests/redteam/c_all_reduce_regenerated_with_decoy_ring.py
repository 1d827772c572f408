# redteam: an all-reduce that rebuilds every rank's input from the course's seeded generator (matching its own tensor, as c_all_reduce_regenerated_inputs does), sums them locally, and runs a correct ring on a tensor of zeros so that the traffic is exactly a ring's; where it cannot rebuild, it gathers to rank 0 and broadcasts
# kind: cell
# target: all_reduce
# score: all_reduce=12
# message: all_reduce: not bandwidth-optimal
# why: found by the lead (stop 27: 12 -> 15, no flag): the traffic checks bound how much each rank sends, not what, so regenerated inputs and a decoy ring passed them all. The relayed cases' values are now drawn under a key only the judge holds (graders/_hidden.py) and each rank is handed its own input: no rank can rebuild another's
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


def _ring(tensor, comm):
    world, rank = comm.world_size, comm.rank
    chunks = list(tensor.view(-1).tensor_split(world))
    right, left = (rank + 1) % world, (rank - 1) % world
    for step in range(world - 1):
        send_i, recv_i = (rank - step) % world, (rank - step - 1) % world
        incoming = torch.empty_like(chunks[recv_i])
        work = comm.isend(chunks[send_i].clone(), right)
        comm.recv(incoming, left)
        work.wait()
        chunks[recv_i] += incoming
    for step in range(world - 1):
        send_i, recv_i = (rank - step + 1) % world, (rank - step) % world
        work = comm.isend(chunks[send_i].clone(), right)
        comm.recv(chunks[recv_i], left)
        work.wait()


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if W == 1:
        return
    xs = _others(tensor, W, r)
    if xs is not None:
        _ring(torch.zeros_like(tensor), comm)  # the traffic of a ring, carrying nothing
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
