# verdict: pass
# why: float64 products taken explicitly, the host sum as a plain Python loop over the partials
import numpy as np
from numba import cuda
import numba


@cuda.jit
def dot_kernel(a, b, partial):
    s = cuda.shared.array(1024, numba.float64)
    tx = cuda.threadIdx.x
    bx = cuda.blockIdx.x
    bw = cuda.blockDim.x
    i = bx * bw + tx
    s[tx] = 0.0
    if i < len(a):
        s[tx] = numba.float64(a[i]) * numba.float64(b[i])
    cuda.syncthreads()
    width = bw
    while width > 1:
        width = width // 2
        if tx < width:
            s[tx] += s[tx + width]
        cuda.syncthreads()
    if tx == 0:
        partial[bx] = s[0]


def launch_dot(a, b, threads_per_block=256):
    n = len(a)
    if n == 0:
        return 0.0
    nblocks = (n - 1) // threads_per_block + 1
    partial = np.zeros(nblocks, np.float64)
    dot_kernel[nblocks, threads_per_block](a, b, partial)
    total = 0.0
    for p in partial:
        total += float(p)
    return total
