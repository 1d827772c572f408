# verdict: fail
# message: load a new pair of tiles
# why: loads the first tile of A and of B only: right for K <= 16, wrong beyond
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE, TILE), dtype=np.float32)
    sB = cuda.shared.array((TILE, TILE), dtype=np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    M, K = A.shape
    N = B.shape[1]
    sA[ty, tx] = A[row, tx] if row < M and tx < K else 0.0
    sB[ty, tx] = B[ty, col] if ty < K and col < N else 0.0
    cuda.syncthreads()
    acc = 0.0
    for j in range(TILE):
        acc += sA[ty, j] * sB[j, tx]
    if row < M and col < N:
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
