# verdict: fail
# message: was asked for
# why: ignores threads_per_block and always launches blocks of 256 (and indexes with the constant)
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * 256 + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    if n == 0:
        return c
    blocks = (n + 255) // 256
    vec_add[blocks, 256](a, b, c, n)
    return c
