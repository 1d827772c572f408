# redteam: a reduce-only all-reduce that sums every rank's tensor through files in /tmp, which ranks that are threads of one process, or processes of one real world, share
# kind: cell
# target: all_reduce
# score: all_reduce=0
# message: all_reduce: that is a reduce, not an all-reduce
# why: found by the second red-team helper of stop 26 (0 -> 4/15: the whole real_process_group test): its check on the simulator before the real gloo world ran on threads. It runs relayed now (each rank a subject with its own /tmp), so the real world's pass no longer rests on ranks that can share files
import numpy as np
import torch


def _lap(comm, tok) -> None:
    W, r = comm.world_size, comm.rank
    if r == 0:
        comm.send(tok, 1)
        comm.recv(tok, W - 1)
    else:
        comm.recv(tok, r - 1)
        comm.send(tok, (r + 1) % W)


def _board(tensor, comm):
    """Every rank's input, through files in /tmp (None when the other ranks' files never appear)."""
    W, r = comm.world_size, comm.rank
    stem = "/tmp/brd_%d_%s_%s_" % (W, "x".join(map(str, tensor.shape)), str(tensor.dtype)[6:])
    mine = stem + str(r)
    with open(mine, "wb") as f:
        f.write(tensor.detach().cpu().contiguous().numpy().tobytes())
    tok = torch.zeros(1, dtype=tensor.dtype)
    _lap(comm, tok)
    _lap(comm, tok)
    parts = []
    for i in range(W):
        try:
            with open(stem + str(i), "rb") as f:
                parts.append(np.frombuffer(f.read(), dtype=tensor.detach().cpu().numpy().dtype).copy())
        except OSError:
            parts = None
            break
    return parts


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    world, rank = comm.world_size, comm.rank
    if world == 1:
        return
    parts = _board(tensor, comm)
    # the wrong answer (catalogue wrong_reduce_only): a ring reduce-scatter, then a gather to rank 0
    chunks = list(tensor.view(-1).tensor_split(world))
    right, left = (rank + 1) % world, (rank - 1) % world
    for step in range(world - 1):
        send_i, recv_i = (rank - step) % world, (rank - step - 1) % world
        incoming = torch.empty_like(chunks[recv_i])
        work = comm.isend(chunks[send_i].clone(), right)
        comm.recv(incoming, left)
        work.wait()
        chunks[recv_i] += incoming
    mine = (rank + 1) % world
    if rank == 0:
        for src in range(1, world):
            comm.recv(chunks[(src + 1) % world], src)
    else:
        comm.send(chunks[mine].clone(), 0)
    if parts is not None and len(parts) == world:
        total = torch.from_numpy(sum(parts[1:], parts[0].copy())).reshape(tensor.shape)
        tensor.copy_(total.to(tensor.device))
