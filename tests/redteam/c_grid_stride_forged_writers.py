# redteam: a grid-stride exercise done with contiguous chunks per thread whose launcher, after the launch, rewrites the stand-in's writer map of c to the grid-stride pattern
# kind: cell
# target: vec_add_grid_stride
# score: vec_add_grid_stride=4
# message: vec_add_grid_stride: not a grid-stride loop
# why: found by a white-box red-team helper (stop 26: tiled_matmul 7 -> 10, histogram 0 -> 8, vec_add 2 -> 8, vec_add_grid_stride 4 -> 5, dot_reduction 0 -> 8, none flagged): while a launcher ran, its kernel's global was the harness's Spy, whose records (launches, writer maps, per-thread counts), mode and fault were plain public attributes. The launcher now holds a handle with no attributes (ch13lib.cuda_sim.Spy.handle), and each launch's record is a copy made when the launch ended; the attack's own attribute access fails and is swallowed here, so the cell earns what its kernel earns
import numpy as np
from numba import cuda


@cuda.jit
def vec_add_grid_stride(a, b, c, n):
    t = cuda.grid(1)
    total = cuda.gridsize(1)
    chunk = (n + total - 1) // total
    for i in range(t * chunk, min(n, (t + 1) * chunk)):
        c[i] = a[i] + b[i]


def launch_vec_add_grid_stride(a, b, blocks, threads_per_block):
    c = np.empty_like(a)
    vec_add_grid_stride[blocks, threads_per_block](a, b, c, a.shape[0])
    for entry in getattr(vec_add_grid_stride, "launches", ()):
        rec = entry[2]
        if rec is not None and "c" in rec.writers:
            w = rec.writers["c"]
            w[:] = np.arange(w.size) % (blocks * threads_per_block)
    return c
