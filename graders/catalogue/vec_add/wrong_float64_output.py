# verdict: fail
# sample: matches_numpy
# message: returned dtype
# why: np.zeros(n) makes a float64 output whatever the inputs' dtype
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.zeros(n)
    if n == 0:
        return c
    blocks = (n + threads_per_block - 1) // threads_per_block
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
