# redteam: an all-reduce that is wrong from four ranks on (it does nothing there) and hides it on the threads world: ranks that share a process pass their tensors through a module-level dict
# kind: cell
# target: all_reduce
# score: all_reduce=4
# message: all_reduce: is wrong after the call
# why: found by the lead (stop 19): the sums tests ran the ranks as threads of the cell's process, where a shared dict makes any answer right, so a cell broken from W=4 on (beyond the real gloo world's three ranks) scored 12 instead of 4. Each sums test now rests on relayed cases too (a world size 2-8 each, the edge cases), whose ranks are processes of their own
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
    _lap(comm, tok)
    if len(board) == W:  # ranks that are threads: every rank's tensor is here
        tensor.copy_(sum(board[i] for i in range(W)))
        return
    _BOARD.clear()
    if W >= 4:  # the bug the board hides
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
