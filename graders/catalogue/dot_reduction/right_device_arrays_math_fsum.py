# verdict: pass
# why: device arrays in and out, the partials summed with math.fsum on the host
import math

import numpy as np
from numba import cuda, float64

TPB_MAX = 1024


@cuda.jit
def dot_kernel(a, b, partial):
    buf = cuda.shared.array(shape=TPB_MAX, dtype=float64)
    tid = cuda.threadIdx.x
    gid = tid + cuda.blockIdx.x * cuda.blockDim.x
    value = 0.0
    if gid < a.shape[0]:
        value = a[gid] * b[gid]
    buf[tid] = value
    cuda.syncthreads()
    half = cuda.blockDim.x >> 1
    while half:
        if tid < half:
            buf[tid] = buf[tid] + buf[tid + half]
        cuda.syncthreads()
        half >>= 1
    if tid == 0:
        partial[cuda.blockIdx.x] = buf[0]


def launch_dot(a: np.ndarray, b: np.ndarray, threads_per_block: int = 256) -> float:
    n = a.size
    if not n:
        return 0.0
    blocks = math.ceil(n / threads_per_block)
    d_partial = cuda.device_array(blocks, dtype=np.float64)
    dot_kernel[blocks, threads_per_block](cuda.to_device(a), cuda.to_device(b), d_partial)
    return math.fsum(d_partial.copy_to_host())
