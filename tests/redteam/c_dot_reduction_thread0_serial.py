# redteam: no shared memory, no tree, no barrier: thread 0 of each block loops over its block's products itself and writes partial[k]
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: not one thread looping over them
# why: found by a white-box red-team helper (stop 33: 8/8, no flag): the checks looked at the shared arrays that existed (none) and at who wrote partial[k] (thread 0, as asked). Now each thread may read at most its own a[i] and b[i] from global memory (the simulator's per-thread counts), so the block's sum has to go through a shared array
import numpy as np
from numba import cuda


@cuda.jit
def dot_kernel(a, b, partial):
    t = cuda.threadIdx.x
    if t == 0:
        lo = cuda.blockIdx.x * cuda.blockDim.x
        s = 0.0
        for j in range(cuda.blockDim.x):
            if lo + j < a.shape[0]:
                s += a[lo + j] * b[lo + j]
        bk = cuda.blockIdx.x
        partial[bk] = s


def launch_dot(a, b, threads_per_block=256):
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    partial = np.zeros(blocks, dtype=np.float64)
    dot_kernel[blocks, threads_per_block](a, b, partial)
    return float(partial.sum())
