# redteam: a kernel numba refuses (a list in it) whose launcher launches it right: the launch-configuration test recorded the launch without running it and never had numba compile it
# kind: cell
# target: vec_add
# score: vec_add=0
# message: vec_add: numba's CUDA compiler refuses
# why: 2026-12-07, white-box red team of the numba-compile boundary: 0 -> 2 unflagged. Stopped: a recorded launch reports its kernel and argument types too (cuda_sim.Spy, record mode), and the judge compiles them
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]
        print("thread", i, [i, i])  # a list: numba's CUDA target refuses it


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        vec_add[blocks, threads_per_block](a, b, c, n)
    return c
