# verdict: fail
# sample: one_tile
# message: out of bounds
# why: the chapter's kernel as printed: one tile of A only, reused as B, and indexed past its 16 columns when K > 16
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile = cuda.shared.array((16, 16), dtype=np.float32)
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = A.shape[1]
    tile[ty, tx] = A[by * 16 + ty, bx * 16 + tx]
    cuda.syncthreads()
    s = 0.0
    for k in range(n):
        s += tile[ty, k] * tile[k, tx]
    C[by * 16 + ty, bx * 16 + tx] = s


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
