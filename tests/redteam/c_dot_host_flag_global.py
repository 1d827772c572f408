# redteam: the host's block sums passed in as partial, thread 0 of each block re-storing its own while a module-level int HOST = 1 (set by the launcher around its launch); with HOST = 0 (the kernel-alone run) the kernel is the reference tree
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: numba's CUDA compiler refuses
# why: found by a white-box red-team helper (stop 35; 8 -> 0): the graded launch's partials are the host's (as c_dot_prefilled_partials); the kernel-alone run saw the reference tree because the kernel's path hung on a global int the launcher flipped around its own launch, which the simulator re-read at every launch. A kernel's captured globals are now frozen at its first launch, as numba compiles them in (_cuda_sim_launch._FIRST_SEEN): a later launch that sees another value fails. Since the output replay of the same stop, the launcher's own launch fails first (its bins, partials or C held the host's values: cuda_sim.Spy._own_outputs)
import math

import numpy as np
from numba import cuda, float64

MAX_TPB = 1024
HOST = 0


@cuda.jit
def dot_kernel(a, b, partial):
    cache = cuda.shared.array(MAX_TPB, float64)
    t = cuda.threadIdx.x
    if HOST == 1:
        if t == 0:
            partial[cuda.blockIdx.x] = partial[cuda.blockIdx.x]
        return
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
    global HOST
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    prod = (np.asarray(a, np.float64) * np.asarray(b, np.float64)).tolist()
    partial = np.array([math.fsum(prod[k * threads_per_block:(k + 1) * threads_per_block]) for k in range(blocks)])
    HOST = 1
    try:
        dot_kernel[blocks, threads_per_block](a, b, partial)
    finally:
        HOST = 0
    return float(partial.sum())
