# verdict: pass
# why: zeroes its own tile cells, then loads them when in range (same thread, no race); float32 accumulator
import numpy as np
from numba import cuda, float32

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * cuda.blockDim.y + ty
    col = cuda.blockIdx.x * cuda.blockDim.x + tx
    K = A.shape[1]
    acc = 0.0
    n_tiles = (K + TILE - 1) // TILE
    for t in range(n_tiles):
        sA[ty, tx] = 0.0
        sB[ty, tx] = 0.0
        if row < A.shape[0] and t * TILE + tx < K:
            sA[ty, tx] = A[row, t * TILE + tx]
        if t * TILE + ty < K and col < B.shape[1]:
            sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    C = np.zeros((A.shape[0], B.shape[1]), np.float32)
    gx = (B.shape[1] + TILE - 1) // TILE
    gy = (A.shape[0] + TILE - 1) // TILE
    tiled_matmul[(gx, gy), (TILE, TILE)](A, B, C)
    return C
