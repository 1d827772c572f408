# redteam: a tensor-parallel MLP that sums the partial outputs through a module-level dict (ranks that are threads of one process share it) and all-reduces zeros of y's size only to look right to the traffic check; where the dict does not fill (processes), each rank returns its partial output alone
# kind: cell
# target: tensor_parallel
# score: tensor_parallel=2
# message: tensor_parallel: W=2 ranks
# why: found by the lead (stop 26: 2 -> 6/8 with no introspection at all): notebook 07's simulated ranks were threads of the cell's process. The passes now rest on relayed cases, each rank a subject process of its own and the judge the world's broker (graders/_parallelism.py): no memory is shared, data moves only as messages the judge relays and logs
import torch
import torch.nn.functional as F

_BOARD: dict = {}


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1) @ w2
    W, r = comm.world_size, comm.rank
    if W == 1:
        return y + b2
    board = _BOARD.setdefault((W, tuple(x.shape), str(x.dtype), float(x.reshape(-1)[0])), {})
    board[r] = y.clone()
    comm.all_reduce(torch.zeros_like(y))  # every rank has posted once this returns (one address space)
    if len(board) == W:
        return sum(board[i] for i in range(W)) + b2
    return y + b2
