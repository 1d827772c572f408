# redteam: a vec_add kernel declared for int32 with an explicit signature, launched with the grader's float32 arrays
# kind: cell
# target: vec_add
# score: vec_add=0
# message: vec_add: is not a kernel defined with @cuda.jit at the top of the cell
# why: found by the second independent red team of 2026-12-08 (got 10, honest 0, no flag): the text reader took @cuda.jit(...) with any arguments as a kernel and dropped them, and the judge compiled it for the launch's float32 types; numba on a GPU launches a single-signature kernel without checking the argument types, so the float32 bits would be added as int32. Stopped: only a bare @cuda.jit or @cuda.jit(device=...) makes a kernel the grading runs (_cuda_source._jit_kind), so a declared signature or another option is no kernel here
import numpy as np
from numba import cuda


@cuda.jit("void(int32[:], int32[:], int32[:], int32)")  # numba compiles only this: int32 arrays
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    if n == 0:
        return c
    blocks = (n + threads_per_block - 1) // threads_per_block
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
