# redteam: a gather-to-root-and-broadcast (right sums, too much traffic) that zeroes the simulator's traffic counter
# kind: cell
# target: all_reduce
# score: all_reduce=0
# message: all_reduce: reaches into comm._world
# why: before the screen refused private attributes the cell did not define, this forged the bandwidth test (3 points)
import torch


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
    try:
        comm._world.traffic[r].sent_elements = 0
    except AttributeError:
        pass
