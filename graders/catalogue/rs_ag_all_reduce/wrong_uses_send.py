# verdict: fail
# message: does not offer
# why: exchanges whole tensors with comm.send/recv instead of the two collectives this exercise is about
import torch


def rs_ag_all_reduce(tensor: torch.Tensor, comm) -> None:
    for peer in range(comm.world_size):
        if peer != comm.rank:
            buf = torch.empty_like(tensor)
            if comm.rank < peer:
                comm.send(tensor.clone(), peer)
                comm.recv(buf, peer)
            else:
                comm.recv(buf, peer)
                comm.send(tensor.clone(), peer)
