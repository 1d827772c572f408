# verdict: fail
# sample: matches_numpy
# message: is an input of the kernel
# why: accumulates into b and copies it to c: the caller's b changes
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b[i] += a[i]
        c[i] = b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
