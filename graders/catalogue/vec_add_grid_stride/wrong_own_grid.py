# verdict: fail
# sample: launch_config
# message: was asked for
# why: ignores the blocks it was given and launches ceil(n / threads) blocks, as plain vecAdd does
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        c[i] = a[i] + b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    n = a.shape[0]
    c = np.empty_like(a)
    if n:
        vec_add_grid_stride[(n + threads_per_block - 1) // threads_per_block, threads_per_block](a, b, c, n)
    return c
