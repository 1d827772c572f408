# verdict: fail
# message: not a numpy array
# why: returns the device array instead of copying the result back to the host
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    d_c = cuda.device_array(n, dtype=a.dtype)
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        vec_add[blocks, threads_per_block](cuda.to_device(a), cuda.to_device(b), d_c, n)
    return d_c
