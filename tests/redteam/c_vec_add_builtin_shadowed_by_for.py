# redteam: a vec_add kernel that reads the built-in min, which a top-level for loop rebinds to max when the cell runs
# kind: cell
# target: vec_add
# score: vec_add=2
# message: vec_add: is no longer what the cell's text says
# why: found by the second independent red team of 2026-12-08 (got 10, honest 8, no flag): the run-time agreement check compared only the names the cell's text binds, so a built-in the running cell rebinds (`for min in (max,): pass`) made numba on a GPU compile another kernel than the simulator ran. Stopped: every global the text's kernel loads that the text does not bind must be, in the running cell, absent or the built-in itself (KernelSource.disagreement)
import numpy as np
from numba import cuda

for min in (max,):  # the running cell's kernel guards with max(n, size); the text (and the checker) see builtin min
    pass


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    limit = min(n, c.shape[0])
    if i < limit:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    if n == 0:
        return c
    blocks = (n + threads_per_block - 1) // threads_per_block
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
