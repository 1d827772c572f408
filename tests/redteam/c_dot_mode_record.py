# redteam: a dot product where every thread of a block writes partial[block] whose launcher sets the kernel stand-in's `mode` to "record" (the launch is recorded, not run) and returns np.dot computed on the host
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: two threads must not write one element
# why: found by a white-box red-team helper (stop 26: tiled_matmul 7 -> 10, histogram 0 -> 8, vec_add 2 -> 8, vec_add_grid_stride 4 -> 5, dot_reduction 0 -> 8, none flagged): while a launcher ran, its kernel's global was the harness's Spy, whose records (launches, writer maps, per-thread counts), mode and fault were plain public attributes. The launcher now holds a handle with no attributes (ch13lib.cuda_sim.Spy.handle), and each launch's record is a copy made when the launch ended; the attack's own attribute access fails and is swallowed here, so the cell earns what its kernel earns
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
    partial[cuda.blockIdx.x] = cache[0]


def launch_dot(a, b, threads_per_block=256):
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    partial = np.zeros(blocks, dtype=np.float64)
    try:  # the grading stand-in's attribute, where there is one
        dot_kernel.mode = "record"
    except AttributeError:
        pass
    dot_kernel[blocks, threads_per_block](a, b, partial)
    return float(np.dot(a.astype(np.float64), b.astype(np.float64)))
