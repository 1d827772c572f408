# redteam: reaches the simulated world's traffic count with a class pattern (`case object(_world=w)`: no getattr, no private name in an attribute, no audit event) and zeroes it behind a gather-to-root all-reduce
# kind: cell
# target: all_reduce
# score: all_reduce=12
# message: all_reduce: not bandwidth-optimal
# why: found by the fourth red team (12 -> 15/15, no flag): the simulated world, its traffic counts included, lived in the cell's process. The judge is now the world's broker and counts the traffic itself; a rank's comm (ch13lib.procgroup.RemoteComm) holds no world and no count
import torch


def _world_of(comm):
    match comm:
        case object(_world=w):
            return w
    return None


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
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
    w = _world_of(comm)
    if w is not None:
        w.traffic[r].sent_elements = 0
