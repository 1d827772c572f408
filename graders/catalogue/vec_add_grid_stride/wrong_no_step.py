# verdict: fail
# message: also wrote in this launch
# message: step by the whole grid, cuda.gridsize(1)
# why: range(start, n) without the stride: every thread computes everything from its index on
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    for i in range(cuda.grid(1), n):
        c[i] = a[i] + b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
