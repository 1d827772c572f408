# redteam: the host's block sums passed in as partial with a sentinel (-7) after them: thread 0 re-stores its partial when the sentinel is there, and runs the reference tree on a zeroed partial
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: did other work in the launcher's launch
# why: written while closing the sixteenth red team's global-flag routes (stop 35; full marks before): the kernel tells the launcher's own launch from the alone run by a sentinel the launcher controls. The launcher's launch is now run again on its own inputs from a zeroed output wherever the output held anything else: every thread must do the same accesses (cuda_sim._same_work), and the checks judge what the kernel made from zeros (cuda_sim.Spy._own_outputs); the data sentinel is caught by the second, the output sentinels by the first
import math

import numpy as np
from numba import cuda, float64

MAX_TPB = 1024
HOST = 0


@cuda.jit
def dot_kernel(a, b, partial):
    cache = cuda.shared.array(MAX_TPB, float64)
    t = cuda.threadIdx.x
    if partial.shape[0] > cuda.gridDim.x and partial[partial.shape[0] - 1] == -7.0:
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
    tagged = np.concatenate([partial, [-7.0]])
    dot_kernel[blocks, threads_per_block](a, b, tagged)
    return float(tagged[:blocks].sum())
