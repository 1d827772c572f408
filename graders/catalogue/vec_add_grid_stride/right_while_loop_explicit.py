# verdict: pass
# why: a while loop with the index and stride spelled out from blockIdx, blockDim and gridDim; no launch for n == 0
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    step = cuda.blockDim.x * cuda.gridDim.x
    while i < n:
        c[i] = a[i] + b[i]
        i += step


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    n = a.size
    c = np.zeros(n, dtype=a.dtype)
    if n:
        vec_add_grid_stride[blocks, threads_per_block](a, b, c, n)
    return c
