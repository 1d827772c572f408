# redteam: a gather-to-root all-reduce that first tries to pass the data between simulated ranks through a module-level dict (ranks that are threads of one process share it), sending only one-element tokens; where the dict does not fill (processes), it does the honest gather
# kind: cell
# target: all_reduce
# score: all_reduce=12
# message: all_reduce: not bandwidth-optimal
# why: found by the lead (stop 18: 12 -> 15/15, no flag, no introspection at all): the simulated ranks were threads of the cell's process. Each simulated rank is now a subject process of its own and the judge is the world's broker (ch13lib.procgroup.SimWorld.run_remote): no memory is shared, data moves only as messages the judge relays and counts
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
    if W == 1:
        return
    board = _BOARD.setdefault((W, tuple(tensor.shape), str(tensor.dtype)), {})
    board[r] = tensor.clone()
    tok = torch.zeros(1, dtype=tensor.dtype)
    _lap(comm, tok)
    _lap(comm, tok)  # rank 0's first lap ended once every rank had posted: the second proves it to all
    if len(board) == W:  # one address space: every rank's tensor is here
        total = sum(board[i] for i in range(W))
        tensor.copy_(total)
        return
    _BOARD.clear()
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
