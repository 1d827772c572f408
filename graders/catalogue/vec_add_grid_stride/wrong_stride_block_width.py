# verdict: fail
# message: also wrote in this launch
# message: step by the whole grid, cuda.gridsize(1)
# why: steps by blockDim.x instead of the whole grid: blocks redo each other's elements
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    i = cuda.grid(1)
    while i < n:
        c[i] = a[i] + b[i]
        i += cuda.blockDim.x


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
