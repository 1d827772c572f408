# verdict: fail
# message: GPU refuses
# why: the chapter's launch arithmetic with no case for n == 0 launches 0 blocks, an invalid configuration
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    blocks = (n + threads_per_block - 1) // threads_per_block
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
