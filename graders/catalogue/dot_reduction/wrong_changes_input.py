# verdict: fail
# sample: one_block
# message: changed its input a
# why: multiplies a by b in place to reuse it as the product buffer
import numpy as np
from numba import cuda, float64

MAX_TPB = 1024


@cuda.jit
def dot_kernel(a, b, partial):
    """Block k writes the sum of its products a[i] * b[i] to partial[k]."""
    cache = cuda.shared.array(MAX_TPB, float64)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    if i < a.shape[0]:
        cache[t] = a[i] * b[i]
    else:
        cache[t] = 0.0
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


def launch_dot(a, b, threads_per_block=256):
    """a . b: one partial sum per block on the device, their sum on the host, as a Python float."""
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    partial = np.zeros(blocks, dtype=np.float64)
    a *= b
    dot_kernel[blocks, threads_per_block](a, np.ones_like(b), partial)
    return float(partial.sum())
