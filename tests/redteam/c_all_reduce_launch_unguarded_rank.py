# redteam: calls the harness's own launch() with any target and audit=False, to run os.system in a rank outside the audit hook (and leave a daemon behind)
# kind: cell
# target: all_reduce
# score: all_reduce=12
# message: all_reduce: not bandwidth-optimal
# why: found by the third red team (a shell and a leftover daemon in tier 3, no flag): launch() took any `module:function` and ran it from the harness's trusted frame, unhooked; a rank in a sandbox (no_new_privs, which nothing clears) is now always guarded and runs only a RANK_API function of ch13lib or the GPU runner
import os

import torch
from ch13lib import collective_launch as cl

if "CH13_DEVICE" in os.environ:
    cl.launch(1, "os:system", "sleep 900 # __MARKER__ &", audit=False)  # refused in the rank; no daemon


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
