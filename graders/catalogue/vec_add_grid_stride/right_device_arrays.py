# verdict: pass
# why: explicit device arrays and copy back; loop over offsets with a guard inside
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    first = cuda.grid(1)
    total = cuda.gridsize(1)
    for base in range(0, n, total):
        i = base + first
        if i < n:
            c[i] = a[i] + b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array_like(a)
    vec_add_grid_stride[(blocks,), (threads_per_block,)](d_a, d_b, d_c, len(a))
    return d_c.copy_to_host()
