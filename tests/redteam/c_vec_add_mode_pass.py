# redteam: a vec_add with a 1-based index (`i = gid - 1`: a[-1] wraps silently on numba) whose launcher sets the kernel stand-in's `mode` to "pass" to skip the checking simulator
# kind: cell
# target: vec_add
# score: vec_add=2
# message: vec_add: negative index
# why: found by a white-box red-team helper (stop 26: tiled_matmul 7 -> 10, histogram 0 -> 8, vec_add 2 -> 8, vec_add_grid_stride 4 -> 5, dot_reduction 0 -> 8, none flagged): while a launcher ran, its kernel's global was the harness's Spy, whose records (launches, writer maps, per-thread counts), mode and fault were plain public attributes. The launcher now holds a handle with no attributes (ch13lib.cuda_sim.Spy.handle), and each launch's record is a copy made when the launch ended; the attack's own attribute access fails and is swallowed here, so the cell earns what its kernel earns
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x - 1
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a, b, threads_per_block=256):
    n = a.shape[0]
    c = np.empty_like(a)
    if n == 0:
        return c
    blocks = (n + threads_per_block - 1) // threads_per_block
    try:  # the grading stand-in's attribute, where there is one
        vec_add.mode = "pass"
    except AttributeError:
        pass
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
