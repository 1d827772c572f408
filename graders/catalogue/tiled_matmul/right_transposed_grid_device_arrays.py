# verdict: pass
# why: x runs over rows and y over columns (grid transposed accordingly), device arrays, tiles stored transposed
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    i = cuda.blockIdx.x * TILE + cuda.threadIdx.x      # row of C
    j = cuda.blockIdx.y * TILE + cuda.threadIdx.y      # column of C
    tr = cuda.threadIdx.x
    tc = cuda.threadIdx.y
    As = cuda.shared.array((TILE, TILE), np.float32)
    Bs = cuda.shared.array((TILE, TILE), np.float32)
    M = A.shape[0]
    K = A.shape[1]
    N = B.shape[1]
    s = 0.0
    for t in range(0, (K + TILE - 1) // TILE):
        kk = t * TILE + tc
        As[tr, tc] = A[i, kk] if i < M and kk < K else 0.0
        kk = t * TILE + tr
        Bs[tr, tc] = B[kk, j] if kk < K and j < N else 0.0
        cuda.syncthreads()
        for q in range(TILE):
            s += As[tr, q] * Bs[q, tc]
        cuda.syncthreads()
    if i < M and j < N:
        C[i, j] = s


def launch_tiled_matmul(A, B):
    M, N = A.shape[0], B.shape[1]
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dC = cuda.device_array((M, N), dtype=np.float32)
    grid = ((M + TILE - 1) // TILE, (N + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](dA, dB, dC)
    return dC.copy_to_host()
