# verdict: fail
# sample: grid_stride_pattern
# message: not a grid-stride loop
# why: each thread takes a contiguous chunk: right sums, but neighbouring threads touch far-apart elements (uncoalesced)
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    t = cuda.grid(1)
    total = cuda.gridsize(1)
    chunk = (n + total - 1) // total
    for i in range(t * chunk, min(n, (t + 1) * chunk)):
        c[i] = a[i] + b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
