# redteam: a naive (untiled) matmul whose launcher, after the launch, zeroes the per-thread global read counts it finds in the kernel's stand-in's launch list (`tiled_matmul.launches[i][2].threads`)
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=7
# message: tiled_matmul: read global memory
# why: found by a white-box red-team helper (stop 26: tiled_matmul 7 -> 10, histogram 0 -> 8, vec_add 2 -> 8, vec_add_grid_stride 4 -> 5, dot_reduction 0 -> 8, none flagged): while a launcher ran, its kernel's global was the harness's Spy, whose records (launches, writer maps, per-thread counts), mode and fault were plain public attributes. The launcher now holds a handle with no attributes (ch13lib.cuda_sim.Spy.handle), and each launch's record is a copy made when the launch ended; the attack's own attribute access fails and is swallowed here, so the cell earns what its kernel earns
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < A.shape[0] and col < B.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    # "bookkeeping": the kernel object's launch list (the grader's stand-in while grading)
    for entry in getattr(tiled_matmul, "launches", ()):
        rec = entry[2]
        for t in getattr(rec, "threads", ()):
            t.global_reads = 0
    return C
