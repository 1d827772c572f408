# verdict: pass
# why: the other classic tree: stride doubling with t % (2 * s) == 0 (more divergent, still correct)
import numpy as np
from numba import cuda, float64


@cuda.jit
def dot_kernel(a, b, partial):
    sh = cuda.shared.array(1024, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] * b[i] if i < a.size else 0.0
    cuda.syncthreads()
    s = 1
    while s < cuda.blockDim.x:
        if t % (2 * s) == 0:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s *= 2
    if t == 0:
        partial[cuda.blockIdx.x] = sh[0]


def launch_dot(a, b, threads_per_block=256):
    if len(a) == 0:
        return 0.0
    blocks = -(-len(a) // threads_per_block)
    partial = np.empty(blocks)
    dot_kernel[blocks, threads_per_block](a, b, partial)
    return float(np.sum(partial))
