# verdict: fail
# sample: kernel_bounds
# message: although n =
# why: loops to c.shape[0] instead of n: on a buffer longer than n it works past n
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    for i in range(cuda.grid(1), c.shape[0], cuda.gridsize(1)):
        c[i] = a[i] + b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
