# verdict: fail
# sample: launch_config
# message: cannot cover
# message: never written
# why: blocks = n // threads_per_block rounds down: the tail n % threads_per_block is never computed
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.zeros_like(a)
    blocks = max(1, n // threads_per_block)
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
