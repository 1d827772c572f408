# redteam: contiguous chunks per thread, with the simulator's writer map rewritten (reached through SimArray.__getstate__()) to the grid-stride pattern
# kind: cell
# target: vec_add_grid_stride
# score: vec_add_grid_stride=0
# message: vec_add_grid_stride: numba's CUDA compiler refuses
# why: white-box red team 18: __getstate__ hands a SimArray's slots back as a dict, among them the writer list the simulator records "who wrote each element" in; a chunked kernel rewrites its entries to i % gridsize after each store and passes grid_stride_pattern (4 -> 5), nothing refused or flagged. Stopped (stop 36): a kernel or device function that names a private or special attribute, or calls a builtin numba does not compile (getattr, vars, type, list...), is refused at its launch (_cuda_sim_launch._check_code); numba compiles neither, so the score is what a kernel that does not compile earns
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    t = cuda.grid(1)
    total = cuda.gridsize(1)
    chunk = (n + total - 1) // total
    who = list(c.__getstate__()[1].values())[5]
    for i in range(t * chunk, min(n, (t + 1) * chunk)):
        c[i] = a[i] + b[i]
        if who is not None:
            who[i] = i % total


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    return c
