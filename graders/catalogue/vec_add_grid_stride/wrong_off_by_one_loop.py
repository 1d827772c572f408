# verdict: fail
# message: out of bounds
# why: loops while i <= n: the thread that reaches n reads a[n]
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i <= n:
        c[i] = a[i] + b[i]
        i += stride


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
