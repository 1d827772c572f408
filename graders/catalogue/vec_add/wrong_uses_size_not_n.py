# verdict: fail
# sample: kernel_bounds
# message: although n =
# why: guards with c.size instead of n: on a buffer longer than n the kernel works past n
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < c.size:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    if n == 0:
        return c
    blocks = (n + threads_per_block - 1) // threads_per_block
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
