# verdict: pass
# why: cuda.grid(1) for the index, explicit device arrays (to_device / device_array / copy_to_host)
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = len(a)
    if n == 0:
        return np.zeros(0, dtype=a.dtype)
    d_a = cuda.to_device(a)
    d_b = cuda.to_device(b)
    d_c = cuda.device_array(n, dtype=a.dtype)
    blocks = -(-n // threads_per_block)
    vec_add[blocks, threads_per_block](d_a, d_b, d_c, n)
    return d_c.copy_to_host()
