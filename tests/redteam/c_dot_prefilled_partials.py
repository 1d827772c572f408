# redteam: the host's block sums passed in as partial, thread 0 of each block copying its own
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: came from the host
# why: found by a white-box red-team helper (stop 34: 8 -> 0, no flag): nothing checked what partial held at launch; the kernel now also runs alone on other inputs and a zeroed partial (cuda_check._check_dot_kernel_alone); since stop 35 the launcher's own launch fails first: what its output held before the launch is not what the kernel makes from zeros (cuda_sim.Spy._own_outputs)
import math
import numpy as np
from numba import cuda


@cuda.jit
def dot_kernel(a, b, partial):
    # no shared memory, no tree: thread 0 re-stores the partial the host put there
    if cuda.threadIdx.x == 0:
        k = cuda.blockIdx.x
        partial[k] = partial[k]


def launch_dot(a, b, threads_per_block=256):
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    prod = (a.astype(np.float64) * b.astype(np.float64)).tolist()
    partial = np.array([math.fsum(prod[k * threads_per_block:(k + 1) * threads_per_block]) for k in range(blocks)])
    dot_kernel[blocks, threads_per_block](a, b, partial)
    return float(math.fsum(partial.tolist()))
