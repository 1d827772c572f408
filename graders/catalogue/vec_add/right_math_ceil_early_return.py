# verdict: pass
# why: threads past n return early; blocks by math.ceil; at least one block, so n == 0 launches one idle block
import math

import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    width = cuda.blockDim.x
    idx = bid * width + tid
    if idx >= n:
        return
    c[idx] = a[idx] + b[idx]


def launch_vec_add(a, b, threads_per_block=256):
    out = np.zeros_like(a)
    blocks = max(1, math.ceil(a.size / threads_per_block))
    vec_add[blocks, threads_per_block](a, b, out, a.size)
    return out
