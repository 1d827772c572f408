# verdict: pass
# why: counts the iterations first (ceil((n - start) / stride)) and indexes start + k * stride
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    rounds = (n - start + stride - 1) // stride
    for k in range(rounds):
        j = start + k * stride
        c[j] = a[j] + b[j]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    out = np.empty(a.shape, a.dtype)
    vec_add_grid_stride[blocks, threads_per_block](a, b, out, a.shape[0])
    return out
