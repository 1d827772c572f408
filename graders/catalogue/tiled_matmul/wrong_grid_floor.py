# verdict: fail
# sample: launch_config
# message: it needs ceil
# why: a grid of M // TILE by N // TILE blocks: the ragged last row and column of tiles are never computed
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
    acc = 0.0
    for t in range((K + TILE - 1) // TILE):
        k = t * TILE + tx
        if row < M and k < K:
            sA[ty, tx] = A[row, k]
        else:
            sA[ty, tx] = 0.0
        k = t * TILE + ty
        if k < K and col < N:
            sB[ty, tx] = B[k, col]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, N = A.shape[0], B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = (max(1, N // TILE), max(1, M // TILE))
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
