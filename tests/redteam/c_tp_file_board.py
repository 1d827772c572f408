# redteam: c_tp_shared_board with files in /tmp instead of a module dict: the partial outputs summed through the file system, zeros all-reduced for the traffic check
# kind: cell
# target: tensor_parallel
# score: tensor_parallel=2
# message: tensor_parallel: differs from the unsharded MLP
# why: found by the second red-team helper of stop 26 (2 -> 4/8: the real_process_group test): see c_all_reduce_file_board; notebook 07's checks before a real world run relayed too
import numpy as np
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    y = F.gelu(x @ w1 + b1) @ w2
    W, r = comm.world_size, comm.rank
    if W == 1:
        return y + b2
    stem = "/tmp/tpb_%d_%s_%r_" % (W, "x".join(map(str, x.shape)), float(x.reshape(-1)[0]))
    with open(stem + str(r), "wb") as f:
        f.write(y.detach().cpu().contiguous().numpy().tobytes())
    comm.all_reduce(torch.zeros_like(y))  # every rank has written once this returns
    parts = []
    for i in range(W):
        try:
            with open(stem + str(i), "rb") as f:
                parts.append(np.frombuffer(f.read(), dtype=y.detach().cpu().numpy().dtype).copy())
        except OSError:
            return y + b2
    total = torch.from_numpy(sum(parts[1:], parts[0].copy())).reshape(y.shape).to(y.device)
    return total + b2
