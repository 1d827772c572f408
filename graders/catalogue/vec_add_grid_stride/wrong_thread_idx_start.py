# verdict: fail
# message: also wrote in this launch
# why: starts at threadIdx.x, forgetting the block: every block starts at the same index
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    for i in range(cuda.threadIdx.x, n, cuda.gridsize(1)):
        c[i] = a[i] + b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
