# redteam: a vec_add kernel whose bounds guard switches from n to the buffer's size when the cell runs (a match capture rebinds the switch)
# kind: cell
# target: vec_add
# score: vec_add=2
# message: vec_add: is no longer what the cell's text says
# why: found by the independent red team of 2026-12-08 (got 10, honest 8, no flag): the simulator and the judge's compiler read a kernel's constants from the cell's text, and the text reader follows only the binding forms it knows; this one rebinds the constant when the cell runs, so numba on a GPU compiles another kernel than the one checked. Stopped: at each launch the simulator asks the running cell whether every name the kernel reads (itself, its device functions, constants and libraries) is still what the text says (_cuda_source.KernelSource.disagreement), whatever spelling changed it; a difference fails the launch. The launch-configuration tests, which run no kernel, keep their points.
import numpy as np
from numba import cuda

BY_N = True  # the text says: guard with n

match False:  # ...the run says: guard with the buffer's size (a capture pattern rebinds BY_N, unseen by the text reader)
    case BY_N:
        pass


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    limit = n if BY_N else c.shape[0]
    if i < limit:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    if n == 0:
        return c
    blocks = (n + threads_per_block - 1) // threads_per_block
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
