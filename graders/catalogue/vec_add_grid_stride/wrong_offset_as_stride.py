# verdict: fail
# message: endless loop
# why: steps by the block's offset blockIdx.x * blockDim.x instead of the grid size: block 0 steps by 0 and never ends
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    i = cuda.grid(1)
    while i < n:
        c[i] = a[i] + b[i]
        i += cuda.blockIdx.x * cuda.blockDim.x


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
