# redteam: cache[0] = 0 by thread 0 with no barrier, then every thread's cuda.atomic.add(cache, 0, a[i] * b[i])
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: data race
# why: found by a white-box red-team helper (stop 34: 8/8, honest 0, no flag): see c_histogram_shared_zeroed_without_barrier (_cuda_sim_device)
import numpy as np
from numba import cuda, float64


@cuda.jit
def dot_kernel(a, b, partial):
    # thread 0 clears the accumulator with no barrier before the others' atomics: on a GPU an atomic
    # that lands first is wiped. (And no tree at all: every product goes into one cell.)
    cache = cuda.shared.array(1024, float64)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    if t == 0:
        cache[0] = 0.0
    if i < a.shape[0]:
        cuda.atomic.add(cache, 0, a[i] * b[i])
    cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


def launch_dot(a, b, threads_per_block=256):
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    partial = np.zeros(blocks, dtype=np.float64)
    dot_kernel[blocks, threads_per_block](a, b, partial)
    return float(partial.sum())
