# redteam: a gather-to-root all-reduce that, on the simulator (ranks are threads of one process), passes the data through a module-level dict and sends only one-element tokens: no introspection at all
# kind: cell
# target: all_reduce
# score: all_reduce=12
# message: all_reduce: not bandwidth-optimal
# why: found by the lead while closing the setattr route (12 -> 15/15, no flag). The simulated ranks share one address space, so data can move outside comm and the traffic count sees only the tokens; on the real gloo world (processes) the same cell does an honest gather-to-root, which is correct there. Closing it needs ranks that share no memory and no other channel (issue 14)
# known-bug: issue 14: traffic is counted on simulated ranks that are threads of one process; data moved outside comm is not traffic
import torch

_BOARD: dict = {}


def _lap(comm, tok) -> None:
    W, r = comm.world_size, comm.rank
    if r == 0:
        comm.send(tok, 1)
        comm.recv(tok, W - 1)
    else:
        comm.recv(tok, r - 1)
        comm.send(tok, (r + 1) % W)


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if type(comm).__name__ == "SimComm":
        if W == 1:
            return
        board = _BOARD.setdefault((W, tuple(tensor.shape), str(tensor.dtype)), {})
        board[r] = tensor.clone()
        tok = torch.zeros(1, dtype=tensor.dtype)
        _lap(comm, tok)
        _lap(comm, tok)  # rank 0's first lap ended once every rank had posted: the second proves it to all
        total = sum(board[i] for i in range(W))
        tensor.copy_(total)
        return
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
